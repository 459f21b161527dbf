/**
 * The page's DOM helpers: elements built with DOM calls (never innerHTML), labelled fields and
 * controls, and the parsing of comma-separated lists.
 */
type Child = Node | string | undefined | false;
type Props = Record<string, string | boolean | number | EventListener | undefined>;

export function h(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value') (el as HTMLInputElement).value = String(value);
    else if (name === 'checked') (el as HTMLInputElement).checked = value === true;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== undefined && child !== false) el.append(child);
  return el;
}

export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el;
}

/** A labelled field: `<div class=field><label for=id>text</label>control</div>`. */
export function field(id: string, text: string, control: HTMLElement, error?: HTMLElement): HTMLElement {
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, text), control, error);
}

export function textInput(value: string, path: string, onInput: (v: string) => void, onChange?: (v: string) => void): HTMLInputElement {
  const input = h('input', { type: 'text', value, 'data-path': path, autocomplete: 'off', spellcheck: 'false' }) as HTMLInputElement;
  input.addEventListener('input', () => { onInput(input.value); });
  if (onChange) input.addEventListener('change', () => { onChange(input.value); });
  return input;
}

export function button(text: string, onClick: () => void, props: Props = {}): HTMLButtonElement {
  return h('button', { type: 'button', ...props, onclick: () => { onClick(); } }, text) as HTMLButtonElement;
}

export function select(options: string[], value: string, onChange: (v: string) => void, path?: string): HTMLSelectElement {
  const el = h('select', path === undefined ? {} : { 'data-path': path }, ...options.map((o) => h('option', { value: o }, o))) as HTMLSelectElement;
  el.value = value;
  el.addEventListener('change', () => { onChange(el.value); });
  return el;
}

export const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
export const safe = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`);
