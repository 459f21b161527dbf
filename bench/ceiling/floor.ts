/**
 * The least any verifier that reads a token's claims must do, shared by the ceiling benchmarks
 * (`bench/ceiling/run.ts`) and the ceiling HTTP servers (`bench/http/server.ts`): split the compact
 * form, one raw RS256 `crypto.verify` with a KeyObject made once, one base64url decode of the
 * payload and one `JSON.parse`. No header check, no claim check, no cache: a ceiling, not a verifier.
 */
import { verify, type KeyObject } from 'node:crypto';

/** The parsed payload when the signature verifies, else `undefined`. */
export function verifyAndParse(token: string, key: KeyObject): unknown {
  const firstDot = token.indexOf('.');
  const lastDot = token.lastIndexOf('.');
  if (firstDot <= 0 || lastDot === firstDot) return undefined;
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  if (!verify('sha256', Buffer.from(token.slice(0, lastDot), 'latin1'), key, signature)) return undefined;
  try {
    return JSON.parse(Buffer.from(token.slice(firstDot + 1, lastDot), 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
