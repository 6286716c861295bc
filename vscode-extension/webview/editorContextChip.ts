/**
 * The line above the composer that says what goes along from the editor ("main.py · lines 10–14
 * selected"), with one button to leave it out of the next message (and to take that back).
 * The host owns the state; this only renders it and reports the click.
 */
import type { EditorContextChip } from '../src/shared/messages';

export class EditorContextLine {
  private readonly label: HTMLElement;
  private readonly toggle: HTMLButtonElement;

  constructor(
    private readonly box: HTMLElement,
    onToggle: () => void,
  ) {
    box.hidden = true;
    this.label = document.createElement('span');
    this.label.className = 'editor-context-label';
    this.toggle = document.createElement('button');
    this.toggle.type = 'button';
    this.toggle.className = 'editor-context-toggle';
    this.toggle.textContent = '×';
    this.toggle.setAttribute('aria-label', 'Leave out editor context for the next message');
    this.toggle.addEventListener('click', onToggle);
    box.append(this.label, this.toggle);
  }

  show(chip: EditorContextChip | null | undefined): void {
    this.box.hidden = !chip;
    if (!chip) return;
    this.box.classList.toggle('left-out', chip.leftOut);
    this.label.textContent = chip.leftOut ? `${chip.label} — left out of the next message` : chip.label;
    this.box.title = chip.leftOut
      ? 'The next message goes without what the editor shows.'
      : 'Goes along with your next message: the open files, the focused file, its cursor and selection.';
    this.toggle.textContent = chip.leftOut ? 'Include' : '×';
    this.toggle.setAttribute(
      'aria-label',
      chip.leftOut ? `Include editor context: ${chip.label}` : `Leave out editor context for the next message: ${chip.label}`,
    );
  }
}
