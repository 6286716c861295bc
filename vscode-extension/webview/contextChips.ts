/**
 * The chips under an answer that say what its request's context gained over the previous turn's
 * (the server's contextChanges event): a skill whose instructions were loaded, memories recalled,
 * what the editor showed, a compressed history. A chip with files opens them (the host opens the
 * paths the server named); one without (a compression) is plain text. `qwen.chat.showContextChanges`
 * hides them all at once (an attribute on the root, so hidden chips keep their place in the transcript).
 */
import type { ContextChange } from '../src/shared/protocol';

const KIND_WORDS: Record<ContextChange['kind'], string> = {
  skill: 'Skill',
  memory: 'Memory',
  compression: 'History',
  editor: 'Editor',
};

/** The chips of one answer, in the order the server sent them; empty when nothing changed. */
export function renderContextChanges(box: HTMLElement, changes: ContextChange[] | undefined): void {
  box.replaceChildren(
    ...(changes ?? []).map((c, i) => {
      const sources = c.sources ?? [];
      const opens = sources.length > 0;
      const chip = document.createElement(opens ? 'button' : 'span');
      chip.className = `context-chip kind-${c.kind}`;
      chip.textContent = c.label;
      if (opens) {
        (chip as HTMLButtonElement).type = 'button';
        chip.dataset.changeIndex = String(i);
        chip.title = `Open ${sources.join(', ')}`;
        chip.setAttribute('aria-label', `${KIND_WORDS[c.kind]}: ${c.label}. Open ${sources.length === 1 ? 'its file' : `its ${sources.length} files`}`);
      } else chip.setAttribute('aria-label', `${KIND_WORDS[c.kind]}: ${c.label}`);
      return chip;
    }),
  );
  box.hidden = !changes?.length;
}

/** `qwen.chat.showContextChanges` as the host sent it (absent counts as on). */
export function showContextChanges(show: boolean | undefined): void {
  // On the root element: VS Code rewrites the body's classes when the theme changes.
  document.documentElement.toggleAttribute('data-hide-context-changes', show === false);
}
