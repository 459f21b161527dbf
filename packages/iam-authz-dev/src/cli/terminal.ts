/**
 * The CLI's edges: text from a token (untrusted: anyone can put anything in an unverified claim)
 * made safe to print on a terminal, and a token read from stdin so that it need not sit in `argv`
 * (visible to every local user in `ps`) nor in the shell history.
 */
import { UsageError } from './usage.js';

/**
 * Code points a terminal acts on or that mislead its reader: C0 (ESC, CR, BEL…), DEL, C1 (CSI
 * U+009B is ESC [ to many terminals), the line/paragraph separators, the bidi marks, embeddings,
 * overrides and isolates (a "Trojan source" line reads otherwise than it is), and lone surrogates.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]/gu;

/** `text` with every unsafe code point written as a visible `\uXXXX` escape; for text already JSON-quoted (its `\` are escaped). */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** Raw text (a claim key, a role) made safe and unambiguous: `\` doubled, unsafe code points escaped. */
export function visible(text: string): string {
  return escapeUnsafe(text.replaceAll('\\', '\\\\'));
}

/** The token without a leading `Bearer ` and surrounding whitespace. */
export function bareToken(raw: string): string {
  return raw.trim().replace(/^bearer\s+/i, '').trim();
}

/** Most bytes read from stdin for a token: far above any real token, low enough to stop a stray file. */
export const STDIN_TOKEN_MAX_BYTES = 65_536;

/** What {@link readStdinToken} reads: `process.stdin`, or a stand-in in tests. */
export type TokenInput = AsyncIterable<Buffer | string> & { readonly isTTY?: boolean; destroy?: () => void };

/**
 * Reads a token from `input` (all of it, up to `maxBytes`): trimmed, a leading `Bearer ` dropped.
 * A terminal is refused rather than waited on (the token would be echoed as it is typed); nothing,
 * or only whitespace, is a usage error. No message holds what was read.
 */
export async function readStdinToken(input: TokenInput = process.stdin, maxBytes = STDIN_TOKEN_MAX_BYTES): Promise<string> {
  if (input.isTTY === true) {
    throw new UsageError('expected a token on stdin, but stdin is a terminal: pipe the token in, e.g. `printf %s "$TOKEN" | iam-authz …`');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > maxBytes) {
      input.destroy?.();
      throw new Error(`stdin holds more than ${maxBytes} bytes: not a token`);
    }
    chunks.push(bytes);
  }
  const token = bareToken(Buffer.concat(chunks).toString('utf8'));
  if (token.length === 0) throw new UsageError('expected a token on stdin, but stdin was empty');
  return token;
}

/** The environment variable a command takes the token from when `--token` is not given. */
export const TOKEN_ENV = 'IAM_AUTHZ_TOKEN';

/** The token: `--token T`, `--token -` (stdin), else {@link TOKEN_ENV}, else stdin. */
export async function tokenFrom(option: string | undefined): Promise<string> {
  if (option === '-') return readStdinToken();
  if (option !== undefined) {
    const token = bareToken(option);
    if (token.length === 0) throw new UsageError('--token is empty');
    return token;
  }
  const fromEnv = process.env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv.trim().length > 0) return bareToken(fromEnv);
  return readStdinToken();
}
