/**
 * Strict parsing of a JWS compact serialization. Only canonical base64url is accepted, so one
 * token has exactly one spelling (a lenient decoder would accept variants that share a signature).
 */
import { TokenInvalidError } from '../errors.js';

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface CompactParts {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** `base64url(header) "." base64url(payload)`, the bytes the signature covers. */
  signingInput: Buffer;
  signature: Buffer;
}

export function parseCompact(token: string): CompactParts {
  if (!COMPACT.test(token)) throw new TokenInvalidError('token is not a compact JWS');
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  const header = decodeJsonObject(token.slice(0, first), 'header');
  const payload = decodeJsonObject(token.slice(first + 1, second), 'payload');
  const signature = decodeCanonical(token.slice(second + 1), 'signature');
  return { header, payload, signingInput: Buffer.from(token.slice(0, second), 'latin1'), signature };
}

function decodeCanonical(segment: string, what: string): Buffer {
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) {
    throw new TokenInvalidError(`token ${what} is not canonical base64url`);
  }
  return bytes;
}

function decodeJsonObject(segment: string, what: string): Record<string, unknown> {
  const bytes = decodeCanonical(segment, what);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new TokenInvalidError(`token ${what} is not valid JSON`, { cause: redactedCause(error) });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenInvalidError(`token ${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/**
 * V8's `JSON.parse` errors quote the start of the text they failed on (`Unexpected token 's',
 * "secret-act"... is not valid JSON`), i.e. decoded token content. Keep the kind of error and the
 * position, never the text, so a logged `cause` cannot leak the token.
 */
function redactedCause(error: unknown): Error {
  if (!(error instanceof SyntaxError)) return new TypeError('not valid UTF-8');
  const position = /\bposition (\d+)/.exec(error.message)?.[1];
  return new SyntaxError(position === undefined ? 'invalid JSON' : `invalid JSON at position ${position}`);
}
