/**
 * Incremental Markdown for a streaming answer. The text is parsed on every update (cheap), but
 * only top-level blocks whose source changed are rendered and sanitised again: while the tail
 * streams, the finished blocks above it keep their DOM nodes untouched (no re-render, no lost
 * selection, no layout shift). Raw HTML is off in markdown-it and the output still goes through
 * DOMPurify, because model output is untrusted. Code (blocks and inline) is shown through the one
 * visible-text escaping (src/shared/visibleText.ts): a right-to-left override or an invisible
 * filler in a command is written out (`\u202e`), and Copy copies what is shown.
 */
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import DOMPurify from 'dompurify';
import { visible } from '../src/shared/visibleText';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

// highlight.js core with the languages answers use most (the full set would triple the bundle);
// a fence in any other language stays plain. Colours come from style.css's --vscode-* tokens.
for (const [name, lang] of Object.entries({ bash, css, diff, go, java, javascript, json, python, rust, sql, typescript, xml, yaml })) hljs.registerLanguage(name, lang);
/** Past this a block stays plain: highlighting re-runs on the streaming tail every frame. */
const HIGHLIGHT_MAX = 20000;

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noreferrer noopener');
    node.removeAttribute('target');
  }
});

export interface Block {
  key: string;
  tokens: Token[];
}

/** Splits markdown-it's token stream into top-level blocks, each keyed by its source lines. */
export function splitBlocks(text: string): Block[] {
  const tokens = md.parse(text, {});
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let current: Token[] = [];
  let depth = 0;
  for (const t of tokens) {
    current.push(t);
    depth += t.nesting;
    if (depth === 0) {
      const map = current[0].map;
      const key = map ? lines.slice(map[0], map[1]).join('\n') : current.map((x) => x.content).join('');
      blocks.push({ key: `${current[0].type}\u0000${key}`, tokens: current });
      current = [];
    }
  }
  if (current.length) blocks.push({ key: `open\u0000${text}`, tokens: current });
  return blocks;
}

export function renderBlockHtml(tokens: Token[]): string {
  return DOMPurify.sanitize(md.renderer.render(tokens, md.options, {}), { USE_PROFILES: { html: true } });
}

/**
 * Adds Copy / Insert at cursor to each code block (buttons handled by delegation in main), colours
 * its tokens, and puts each table in a horizontal scroll box so a narrow side bar clips no column.
 */
function decorateCode(el: HTMLElement): void {
  for (const table of Array.from(el.querySelectorAll('table'))) {
    const scroll = document.createElement('div');
    scroll.className = 'table-scroll';
    scroll.tabIndex = 0; // reachable and scrollable by keyboard
    scroll.setAttribute('role', 'region');
    scroll.setAttribute('aria-label', 'Table');
    table.replaceWith(scroll);
    scroll.append(table);
  }
  for (const code of Array.from(el.querySelectorAll('code'))) {
    const text = code.textContent ?? '';
    const shown = visible(text, 'block');
    if (shown === text) continue;
    code.textContent = shown;
    code.classList.add('has-hidden');
    code.title = 'Characters that do not show as themselves are written out (\\u…); Copy copies what is shown.';
  }
  for (const pre of Array.from(el.querySelectorAll('pre'))) {
    const code = pre.querySelector('code');
    const lang = /(?:^|\s)language-([\w+#-]+)/.exec(code?.className ?? '')?.[1]?.toLowerCase();
    if (code && lang && hljs.getLanguage(lang) && (code.textContent ?? '').length <= HIGHLIGHT_MAX) {
      // highlight.js escapes the text it wraps in its spans, so the markup holds only those spans.
      code.innerHTML = hljs.highlight(code.textContent ?? '', { language: lang, ignoreIllegals: true }).value;
      code.classList.add('hljs');
    }
    const bar = document.createElement('div');
    bar.className = 'code-actions';
    for (const [action, label] of [['copy', 'Copy'], ['insert', 'Insert at cursor']] as const) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'code-action';
      b.dataset.codeAction = action;
      b.textContent = label;
      b.setAttribute('aria-label', `${label} code`);
      bar.appendChild(b);
    }
    const wrap = document.createElement('div');
    wrap.className = 'code-block';
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  }
}

export class MarkdownView {
  private keys: string[] = [];

  constructor(readonly el: HTMLElement) {}

  update(text: string): void {
    const blocks = splitBlocks(text);
    const children = this.el.children;
    let i = 0;
    while (i < blocks.length && i < this.keys.length && blocks[i].key === this.keys[i]) i++;
    // Blocks from i on changed (normally only the last one, the streaming tail).
    for (let j = i; j < blocks.length; j++) {
      const div = document.createElement('div');
      div.className = 'md-block';
      div.innerHTML = renderBlockHtml(blocks[j].tokens);
      decorateCode(div);
      const old = children[j];
      if (old) old.replaceWith(div);
      else this.el.appendChild(div);
    }
    while (children.length > blocks.length) children[children.length - 1].remove();
    this.keys = blocks.map((b) => b.key);
  }
}
