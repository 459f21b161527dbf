/**
 * RFC 6750 §2.1 extraction: the token comes only from an `Authorization: Bearer <token>` header
 * (scheme case-insensitive), never from a query string or body.
 */
import { TokenInvalidError, TokenMissingError } from '../errors.js';

/** Returns the token text, or throws 401 `ERR_TOKEN_MISSING` / `ERR_TOKEN_INVALID`. */
export function extractBearer(authorization: string | undefined, maxTokenBytes: number): string {
  if (typeof authorization !== 'string' || authorization.length === 0) throw new TokenMissingError();
  // "Bearer" + one space + the token + a little slack for stray spaces; anything longer is refused
  // before we copy, trim or decode it.
  if (authorization.length > maxTokenBytes + 64) throw new TokenInvalidError('token is too large');
  const space = authorization.indexOf(' ');
  if (space !== 6 || !isBearer(authorization)) {
    throw new TokenMissingError('the Authorization header does not use the Bearer scheme');
  }
  const token = authorization.slice(7).trim();
  if (token.length === 0) throw new TokenMissingError();
  if (token.length > maxTokenBytes) throw new TokenInvalidError('token is too large');
  return token;
}

/** The first six characters spell "bearer" in any case, compared without copying them. */
function isBearer(header: string): boolean {
  for (let i = 0; i < 6; i++) {
    // ASCII letters only: | 0x20 lowers A–Z and leaves a–z, and maps no other character to a–z.
    if ((header.charCodeAt(i) | 0x20) !== BEARER.charCodeAt(i)) return false;
  }
  return true;
}

const BEARER = 'bearer';
