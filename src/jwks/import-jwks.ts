/**
 * Turns a JWK Set into verification keys. jose validates and imports each JWK; we keep only RSA
 * public signing keys of at least 2048 bits with a `kid`. Symmetric (`oct`) keys, private keys,
 * small moduli and keys marked for another use are never used.
 */
import { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

/** jose, loaded with the first JWK Set (like undici, it is not needed to start a service). */
let jose: Promise<typeof import('jose')> | undefined;

/** Smallest RSA modulus accepted, in bits (NIST SP 800-131A, RFC 7518 §3.3). */
export const MIN_RSA_BITS = 2048;

export interface VerificationKey {
  kid: string;
  /** The JWK's `alg`, when it names one; the key then verifies only that algorithm. */
  alg: string | undefined;
  key: KeyObject;
  /** RFC 7638 thumbprint of the public key (`kty`, `n`, `e`): tells a key replaced under the same kid. */
  thumbprint: string;
}

/** Keys by `kid`; one kid may name several keys (all are tried). */
export type KeyIndex = ReadonlyMap<string, readonly VerificationKey[]>;

/** True when `value` has the shape of a JWK Set: an object whose `keys` is an array of objects. */
export function isJwkSetLike(value: unknown): value is { keys: unknown[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = (value as { keys?: unknown }).keys;
  return Array.isArray(keys) && keys.every((k) => typeof k === 'object' && k !== null && !Array.isArray(k));
}

/** Imports the usable keys of `jwks`; unusable ones are skipped. `algorithms` filters by `alg`. */
export async function importJwks(jwks: { keys: unknown[] }, algorithms: ReadonlySet<string>): Promise<KeyIndex> {
  const { importJWK, calculateJwkThumbprint } = await (jose ??= import('jose'));
  const index = new Map<string, VerificationKey[]>();
  for (const candidate of jwks.keys) {
    const key = await importOne(candidate as Record<string, unknown>, algorithms, importJWK, calculateJwkThumbprint);
    if (!key) continue;
    const list = index.get(key.kid);
    if (list) list.push(key);
    else index.set(key.kid, [key]);
  }
  return index;
}

type Jose = typeof import('jose');

async function importOne(jwk: Record<string, unknown>, algorithms: ReadonlySet<string>, importJWK: Jose['importJWK'], calculateJwkThumbprint: Jose['calculateJwkThumbprint']): Promise<VerificationKey | undefined> {
  const { kty, kid, use, alg, n, e } = jwk;
  if (kty !== 'RSA' || typeof kid !== 'string' || kid.length === 0) return undefined;
  if (typeof n !== 'string' || typeof e !== 'string') return undefined;
  if (Object.hasOwn(jwk, 'd')) return undefined; // a published private key is a compromised key
  if (use !== undefined && use !== 'sig') return undefined;
  const ops = jwk.key_ops;
  if (ops !== undefined && !(Array.isArray(ops) && ops.includes('verify'))) return undefined;
  if (alg !== undefined && (typeof alg !== 'string' || !algorithms.has(alg))) return undefined;
  try {
    // Import only the public members under RS256: the CryptoKey's hash is irrelevant once converted.
    const publicJwk = { kty: 'RSA', n, e } satisfies JWK;
    const imported = await importJWK(publicJwk, 'RS256');
    const key = imported instanceof Uint8Array ? undefined : KeyObject.from(imported);
    if (key?.asymmetricKeyType !== 'rsa') return undefined;
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) return undefined;
    return { kid, alg, key, thumbprint: await calculateJwkThumbprint(publicJwk) };
  } catch {
    return undefined; // malformed member: jose refused it
  }
}

/**
 * Kids of `before` that `after` no longer holds with the same key material: gone, or replaced
 * under the same kid (compared by thumbprint). Tokens verified with those keys must not be served
 * from a cache any more.
 */
export function changedKids(before: KeyIndex, after: KeyIndex): string[] {
  const changed: string[] = [];
  for (const [kid, keys] of before) {
    const now = after.get(kid);
    if (!now || keys.some((k) => !now.some((n) => n.thumbprint === k.thumbprint))) changed.push(kid);
  }
  return changed;
}
