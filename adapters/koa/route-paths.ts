/**
 * A `@koa/router` route path (path-to-regexp syntax, prefixes already applied by the router), read
 * into tokens, and its OpenAPI template. path-to-regexp 8, which @koa/router 15 uses: `:name`,
 * `:"quoted"`, `*wildcard`, `{optional group}`, `\` escapes; the `:name(pattern)` and `:name?` of
 * path-to-regexp 6 (older routers) are read too.
 */
import { openApiPath } from '../../src/adapter/internal.js';

export type Token =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'param'; readonly name: string; readonly optional: boolean; readonly wildcard: boolean }
  | { readonly kind: 'group'; readonly tokens: readonly Token[] };

const NAME = /^[$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*/u;

export function tokenize(path: string): Token[] {
  const stack: Token[][] = [[]];
  const out = (): Token[] => stack[stack.length - 1] as Token[];
  let text = '';
  const flush = () => { if (text) out().push({ kind: 'text', text }); text = ''; };
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (c === '\\') { text += path[++i] ?? ''; continue; }
    if (c === '{') { flush(); stack.push([]); continue; }
    if (c === '}' && stack.length > 1) { flush(); const tokens = stack.pop() as Token[]; out().push({ kind: 'group', tokens }); continue; }
    if (c !== ':' && c !== '*') { text += c; continue; }
    let name = '';
    if (path[i + 1] === '"') {
      const end = path.indexOf('"', i + 2);
      name = path.slice(i + 2, end < 0 ? path.length : end);
      i = end < 0 ? path.length : end;
    } else {
      name = NAME.exec(path.slice(i + 1))?.[0] ?? '';
      i += name.length;
    }
    if (!name && c === ':') { text += c; continue; }
    if (path[i + 1] === '(') i = closingParen(path, i + 1); // path-to-regexp 6: `:id(\\d+)`
    const modifier = /[?*+]/.test(path[i + 1] ?? '') ? path[++i] : undefined;
    flush();
    out().push({ kind: 'param', name: name || '0', optional: modifier === '?' || modifier === '*', wildcard: c === '*' || modifier === '*' || modifier === '+' });
  }
  flush();
  while (stack.length > 1) { const tokens = stack.pop() as Token[]; out().push({ kind: 'group', tokens }); }
  return stack[0] as Token[];
}

function closingParen(path: string, open: number): number {
  let depth = 0;
  for (let i = open; i < path.length; i++) {
    if (path[i] === '\\') i++;
    else if (path[i] === '(') depth++;
    else if (path[i] === ')' && --depth === 0) return i;
  }
  return path.length - 1;
}

function template(tokens: readonly Token[]): string {
  return tokens.map((t) => (t.kind === 'text' ? t.text : t.kind === 'param' ? `{${t.name}}` : template(t.tokens))).join('');
}

/** The OpenAPI template of a route path: `/files/:name{.:ext}` → `/files/{name}.{ext}`; an optional part is kept. */
export function routeTemplate(path: string): string {
  // openApiPath only normalises the slashes here: no `:name` is left for it to rewrite.
  return openApiPath(template(tokenize(path)));
}
