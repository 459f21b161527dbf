/** What the page tells the user: the message box, and the mark on the field the server named as wrong. */
import { byId } from './dom.js';

export function say(kind: 'error' | 'info', text: string, action?: HTMLButtonElement): void {
  const box = byId('message');
  box.replaceChildren(text, ...(action ? [action] : []));
  box.className = kind;
  box.hidden = false;
}

export function clearMessage(): void {
  const box = byId('message');
  box.hidden = true;
  box.replaceChildren();
}

/** Marks the control whose `data-path` is the bad field, or the nearest enclosing one. */
export function markField(fieldPath: string | undefined): void {
  for (const el of document.querySelectorAll('[aria-invalid="true"][data-server-error]')) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('data-server-error');
  }
  if (fieldPath === undefined) return;
  let best: HTMLElement | undefined;
  let bestLength = -1;
  for (const el of document.querySelectorAll<HTMLElement>('[data-path]')) {
    const p = el.dataset.path ?? '';
    if ((fieldPath === p || fieldPath.startsWith(`${p}.`) || fieldPath.startsWith(`${p}[`)) && p.length > bestLength) {
      best = el;
      bestLength = p.length;
    }
  }
  if (best) {
    best.setAttribute('aria-invalid', 'true');
    best.setAttribute('data-server-error', '');
  }
}
