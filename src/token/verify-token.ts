/**
 * The verifier: compact token → verified {@link Identity}. Order matters: structure and header
 * first (cheap, no key needed), then the signature, and only then the claims, so nothing about an
 * unsigned payload is ever reported.
 */
import { TokenInvalidError } from '../errors.js';
import type { KeySet } from '../jwks/key-set.js';
import type { Identity } from '../types.js';
import { checkClaims, type ClaimPolicy } from './claims.js';
import { parseCompact } from './compact.js';
import { checkHeader, type HeaderPolicy } from './header.js';
import { verifySignature, type SupportedAlgorithm } from './signature.js';

export interface VerifyPolicy extends HeaderPolicy, ClaimPolicy {}

export async function verifyToken(token: string, keySet: KeySet, policy: VerifyPolicy, now: () => number): Promise<Identity> {
  const parts = parseCompact(token);
  const header = checkHeader(parts.header, policy);
  const keys = keySet.peek(header.kid) ?? (await keySet.resolve(header.kid));
  const alg = header.alg as SupportedAlgorithm; // checkHeader allowed it, and options only allow supported ones
  let verified = false;
  for (const candidate of keys) {
    if (candidate.alg !== undefined && candidate.alg !== alg) continue;
    if (verifySignature(alg, parts.signingInput, candidate.key, parts.signature)) {
      verified = true;
      break;
    }
  }
  if (!verified) throw new TokenInvalidError('token signature is invalid');
  const claims = checkClaims(parts.payload, policy, now());
  // Deeply frozen: the token cache hands the same Identity to every request presenting the token,
  // so no request may change what another one sees (custom claims can hold nested JSON).
  return Object.freeze({ token, header: deepFreeze(header), claims: deepFreeze(claims) });
}

/** Freezes a tree parsed from JSON (plain objects and arrays, no cycles). */
function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child as object);
  }
  return Object.freeze(value);
}
