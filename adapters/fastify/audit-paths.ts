/**
 * Fastify route paths (find-my-way syntax) in the OpenAPI template form the audit reports. The
 * kit's `openApiPath` knows `:name` and `:name(regex)`; Fastify also has patterns with nested
 * parentheses, the wildcard `*` and the escaped colon `::`, read here first. The names follow
 * `@fastify/swagger`, so that the audit and the document it generates name the same paths.
 */
import { openApiPath } from '../../src/adapter/internal.js';

/** A literal colon while `openApiPath` runs (it would read `:name` as a parameter). */
const COLON = '\u0000';
const NAME = /[A-Za-z0-9_]/;

/**
 * `/orders/:id(^\\d+)` → `/orders/{id}`, `/files/*` → `/files/{wildcard}`, `/jobs/name::run` →
 * `/jobs/name:run`; no trailing slash (the root stays `/`).
 */
export function fastifyOpenApiPath(url: string): string {
  let plain = '';
  for (let i = 0; i < url.length; i++) {
    const char = url[i] as string;
    if (char === ':' && url[i + 1] === ':') {
      plain += COLON;
      i++;
    } else if (char === ':') {
      let end = i + 1;
      while (end < url.length && NAME.test(url[end] as string)) end++;
      plain += url.slice(i, end);
      i = url[end] === '(' ? closingParenthesis(url, end) : end - 1;
    } else if (char === '*') {
      plain += ':wildcard';
    } else {
      plain += char;
    }
  }
  return openApiPath(plain).replaceAll(COLON, ':');
}

/** The index of the `)` closing the `(` at `open`, nested ones skipped (the end of `url` if none). */
function closingParenthesis(url: string, open: number): number {
  let depth = 0;
  for (let i = open; i < url.length; i++) {
    if (url[i] === '\\') i++;
    else if (url[i] === '(') depth++;
    else if (url[i] === ')' && --depth === 0) return i;
  }
  return url.length;
}
