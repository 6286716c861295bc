/**
 * Ctrl/Cmd+V in the composer with an image on the clipboard: the image goes to the host (base64),
 * which has the server write it to Qwen Code's clipboard folder and adds it as a chip. A paste that
 * holds plain text stays text, even when an image comes along (a spreadsheet's cells are copied as
 * both): only a clipboard with images and no text is taken as images. What the bytes are is the
 * server's to decide; the clipboard's type only says which items to read.
 */

/** The images a paste holds, or none when it holds plain text. */
export function pastedImages(data: DataTransfer | null): File[] {
  if (!data || data.getData('text/plain')) return [];
  const files: File[] = [];
  for (const item of Array.from(data.items)) {
    const file = item.kind === 'file' && item.type.startsWith('image/') ? item.getAsFile() : null;
    if (file) files.push(file);
  }
  return files;
}

/** The file's bytes as base64 (a data URL's payload). */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the pasted image could not be read'));
    reader.readAsDataURL(file);
  });
}

/** Intercept image pastes on `target`; each image is handed to `send` as base64. */
export function watchPastes(target: HTMLElement, send: (data: string) => void): void {
  target.addEventListener('paste', (e) => {
    const images = pastedImages(e.clipboardData);
    if (!images.length) return; // text: the textarea pastes it as usual
    e.preventDefault();
    for (const image of images) void readBase64(image).then(send, () => undefined);
  });
}
