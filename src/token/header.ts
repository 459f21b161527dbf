/**
 * JOSE header checks made before any key is looked up: algorithm allow-list, a string `kid`,
 * no critical extensions, the token format (`cty`). `jwk`, `jku`, `x5u` and `x5c` are ignored:
 * keys come only from the configured JWKS.
 */
import { TokenInvalidError } from '../errors.js';
import type { IamTokenHeader } from '../types.js';

export interface HeaderPolicy {
  algorithms: ReadonlySet<string>;
  tokenFormats: ReadonlySet<string>;
}

export function checkHeader(header: Record<string, unknown>, policy: HeaderPolicy): IamTokenHeader {
  const { alg, kid, cty } = header;
  if (typeof alg !== 'string' || !policy.algorithms.has(alg)) {
    throw new TokenInvalidError('token algorithm is not allowed');
  }
  if (Object.hasOwn(header, 'crit')) throw new TokenInvalidError('token has unsupported critical header parameters');
  // RFC 7797 unencoded payloads are never accepted.
  if (Object.hasOwn(header, 'b64') && header.b64 !== true) {
    throw new TokenInvalidError('token uses an unencoded payload (b64)');
  }
  if (typeof kid !== 'string' || kid.length === 0) throw new TokenInvalidError('token header has no kid');
  if (typeof cty !== 'string' || !policy.tokenFormats.has(cty)) {
    throw new TokenInvalidError('token format (cty) is not accepted');
  }
  return header as IamTokenHeader;
}
