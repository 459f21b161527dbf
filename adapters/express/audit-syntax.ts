/**
 * Express route paths as the audit reads them: Express 4's syntax (path-to-regexp 0.1: `:id`,
 * `:id(\\d+)`, `:id?`, `*`) and Express 5's (path-to-regexp 8: `:id`, `*splat`, `{…}` optional,
 * `\\` escapes, `:"quoted"`), each into the paths it stands for — an optional part makes two, one
 * with and one without — as segments that can be compared (audit-cover.ts) and written in OpenAPI
 * form (`{id}`; an unnamed Express 4 `*` is `{0}`, as `req.params[0]`; a RegExp is shown as written).
 */

import { express4Tokens, express5Tokens, type Part, type Token } from './audit-tokens.js';

export type { Part } from './audit-tokens.js';
export type Syntax = 'express4' | 'express5';
/** One `/`-separated segment; `sensitive`: whether the router that matches it is case-sensitive. */
export interface Segment { readonly parts: readonly Part[]; readonly sensitive: boolean }
export type Segments = readonly Segment[];

/** The paths `spec` (a string, a RegExp, or an array of them) stands for. */
export function pathsOf(spec: unknown, syntax: Syntax, sensitive: boolean): Segments[] {
  if (Array.isArray(spec)) return spec.flat(Infinity).flatMap((one) => pathsOf(one, syntax, sensitive));
  if (spec instanceof RegExp) return [[{ parts: [{ kind: 'regexp', value: String(spec) }], sensitive }]];
  if (typeof spec !== 'string') return [];
  return expand(syntax === 'express4' ? express4Tokens(spec) : express5Tokens(spec)).map((parts) => segmentsOf(parts, sensitive));
}

/** The OpenAPI form of a path: `/fleet/{vin}`, the root `/`, no trailing slash. */
export function openApiForm(segments: Segments): string {
  const render = (p: Part) => (p.kind === 'text' ? p.value : p.kind === 'regexp' ? p.value.slice(1) : `{${p.value}}`);
  return `/${segments.map((s) => s.parts.map(render).join('')).join('/')}`;
}

/** Every combination of optional groups left out or kept, the shortest first. */
function expand(tokens: readonly Token[]): Part[][] {
  let paths: Part[][] = [[]];
  for (const token of tokens) {
    if (token.kind !== 'group') paths = paths.map((p) => [...p, token]);
    else {
      const inner = expand(token.tokens);
      paths = paths.flatMap((p) => [p, ...inner.map((q) => [...p, ...q])]);
    }
  }
  return paths;
}

function segmentsOf(parts: readonly Part[], sensitive: boolean): Segment[] {
  const segments: Part[][] = [[]];
  for (const part of parts) {
    if (part.kind !== 'text') segments.at(-1)?.push(part);
    else part.value.split('/').forEach((text, n) => {
      if (n > 0) segments.push([]);
      const current = segments.at(-1) as Part[];
      const previous = current.at(-1);
      if (text === '') return;
      if (previous?.kind === 'text') current[current.length - 1] = { kind: 'text', value: previous.value + text };
      else current.push({ kind: 'text', value: text });
    });
  }
  return segments.filter((s) => s.length > 0).map((s) => ({ parts: s, sensitive }));
}
