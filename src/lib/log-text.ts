/**
 * Text from a request or a token (a resource reference, `sub`, `app`, a role, an issuer) made safe
 * to embed in a log message, an error message or a process warning: a caller who can put a line
 * break or a terminal escape in a value must not be able to write a line that looks like the
 * library's own (`iam-authz warn: …`), repaint a terminal, or make a line read otherwise than it is.
 * One rule everywhere, the same as the CLI's: such code points become visible `\uXXXX` escapes.
 */

/**
 * Code points a log line must not carry raw: C0 (LF, CR, ESC, NUL…), DEL, C1 (NEL U+0085, CSI
 * U+009B), the line and paragraph separators U+2028/U+2029, the bidi marks (U+061C, U+200E,
 * U+200F), embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), and lone surrogates
 * (which a UTF-8 writer would turn into U+FFFD, hiding what was sent).
 */
// eslint-disable-next-line no-control-regex -- exactly the characters that would forge or disguise a log line
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]/gu;

/** Most characters of one value shown in a message; the structured fields keep the whole value. */
export const LOG_VALUE_MAX_CHARS = 200;

function escapeCodePoint(c: string): string {
  return `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every code point that could break or disguise a log line written as a visible
 * `\uXXXX` escape; everything else, printable ASCII included, is unchanged. Applying it twice
 * changes nothing more.
 */
export function escapeForLog(text: string): string {
  return text.replace(UNSAFE, escapeCodePoint);
}

/** A value from a request or a token for a message: cut at {@link LOG_VALUE_MAX_CHARS} (`…`), then escaped. */
export function forLog(value: string): string {
  return escapeForLog(cut(value));
}

/** A value in JSON double quotes, for a message that tells expected from actual: cut, then escaped. */
export function quotedForLog(value: string): string {
  return escapeForLog(JSON.stringify(cut(value)));
}

/** A name in single quotes with `'` escaped as well, for warnings that quote names (the inventory's). */
export function singleQuotedForLog(name: string): string {
  return `'${escapeForLog(name).replaceAll('\'', '\\u0027')}'`;
}

function cut(value: string): string {
  return value.length > LOG_VALUE_MAX_CHARS ? `${value.slice(0, LOG_VALUE_MAX_CHARS)}…` : value;
}
