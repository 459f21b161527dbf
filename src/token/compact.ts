/**
 * Strict parsing of a JWS compact serialization. Only canonical base64url is accepted, so one
 * token has exactly one spelling (a lenient decoder would accept variants that share a signature).
 * This is on the uncached hot path, so the checks are O(1) per segment where they can be.
 */
import { isUtf8 } from 'node:buffer';
import { TokenInvalidError } from '../errors.js';

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** 6-bit value of each base64url character (the regex has already refused every other character). */
const SEXTET = new Uint8Array(128);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
for (let i = 0; i < ALPHABET.length; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;

export interface CompactParts {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** `base64url(header) "." base64url(payload)`, the bytes the signature covers. */
  signingInput: Buffer;
  signature: Buffer;
}

/** Where the two dots of a compact token are. */
export interface CompactSplit {
  /** Index of the first dot: the header segment is `token.slice(0, first)`. */
  first: number;
  /** Index of the second dot. */
  second: number;
}

/** Checks the form (alphabet, three non-empty segments, canonical encoding) and finds the dots. */
export function splitCompact(token: string): CompactSplit {
  if (!COMPACT.test(token)) throw new TokenInvalidError('token is not a compact JWS');
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  checkCanonical(token, 0, first, 'header');
  checkCanonical(token, first + 1, second, 'payload');
  checkCanonical(token, second + 1, token.length, 'signature');
  return { first, second };
}

/**
 * One buffer the token's bytes are decoded into, reused by every verification: each use (write,
 * then read) is synchronous, so no two overlap on the one event loop. Views of it never leave this
 * module's callers' synchronous code; whatever must outlive it is copied ({@link copyParts}).
 */
let scratch = Buffer.allocUnsafeSlow(8192);

/** {@link scratch}, grown to hold at least `bytes`. */
function scratchOf(bytes: number): Buffer {
  if (scratch.length < bytes) scratch = Buffer.allocUnsafeSlow(Math.max(bytes, scratch.length * 2));
  return scratch;
}

/** Decodes the JSON object of `token.slice(start, end)` (already known to be canonical). */
export function decodeJsonSegment(token: string, start: number, end: number, what: 'header' | 'payload'): Record<string, unknown> {
  const buffer = scratchOf(end - start);
  const length = buffer.write(token.slice(start, end), 0, 'base64url');
  let value: unknown;
  try {
    if (!isUtf8(buffer.subarray(0, length))) throw new TypeError('not valid UTF-8');
    value = JSON.parse(buffer.toString('utf8', 0, length));
  } catch (error) {
    throw new TokenInvalidError(`token ${what} is not valid JSON`, { cause: redactedCause(error) });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenInvalidError(`token ${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** The bytes the signature covers and the signature itself. */
export interface SignedParts {
  /** `base64url(header) "." base64url(payload)`. */
  signingInput: Buffer;
  signature: Buffer;
}

/** {@link SignedParts} in buffers of their own, for a verification that goes asynchronous. */
export function signedParts(token: string, split: CompactSplit): SignedParts {
  // One latin1 copy of the whole token, viewed up to the second dot: no intermediate string.
  return {
    signingInput: Buffer.from(token, 'latin1').subarray(0, split.second),
    signature: Buffer.from(token.slice(split.second + 1), 'base64url'),
  };
}

/**
 * {@link SignedParts} as views of the shared scratch buffer: no allocation, but valid only until
 * the next call of this module, i.e. for a synchronous verify. {@link copyParts} keeps them longer.
 */
export function signedPartsInScratch(token: string, split: CompactSplit): SignedParts {
  // The token is ASCII (splitCompact checked it), so latin1 writes one byte per character.
  const buffer = scratchOf(token.length);
  buffer.write(token, 0, split.second, 'latin1');
  const length = buffer.write(token.slice(split.second + 1), split.second, 'base64url');
  return { signingInput: buffer.subarray(0, split.second), signature: buffer.subarray(split.second, split.second + length) };
}

/** Copies of `parts`, for use after the scratch buffer may have been reused. */
export function copyParts(parts: SignedParts): SignedParts {
  return { signingInput: Buffer.from(parts.signingInput), signature: Buffer.from(parts.signature) };
}

/** Every part at once (the verifier decodes the header only when its cache misses). */
export function parseCompact(token: string): CompactParts {
  const split = splitCompact(token);
  return {
    header: decodeJsonSegment(token, 0, split.first, 'header'),
    payload: decodeJsonSegment(token, split.first + 1, split.second, 'payload'),
    ...signedParts(token, split),
  };
}

/**
 * Canonical unpadded base64url, in O(1): a length of 1 mod 4 encodes no whole byte, and the bits
 * of the last character below the final byte must be zero — otherwise several spellings decode to
 * the same bytes.
 */
function checkCanonical(token: string, start: number, end: number, what: string): void {
  const rest = (end - start) % 4;
  const last = SEXTET[token.charCodeAt(end - 1)] ?? 0;
  if (rest === 1 || (rest === 2 && (last & 0x0f) !== 0) || (rest === 3 && (last & 0x03) !== 0)) {
    throw new TokenInvalidError(`token ${what} is not canonical base64url`);
  }
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
