/**
 * RSA signature verification with node:crypto. jose validates and imports the JWKS; the per-token
 * verify goes straight to OpenSSL with a `KeyObject` built once per JWK, which is about five times
 * faster than jose's WebCrypto path on Node.
 *
 * workerd's `nodejs_compat` verifies RSASSA-PKCS1-v1_5 (RS*) correctly, but ignores the PSS padding
 * options (every PS* signature comes out false): there PS* goes through WebCrypto instead.
 */
import { constants, verify, type KeyObject, type VerifyKeyObjectInput, type VerifyPublicKeyInput, type webcrypto } from 'node:crypto';
import { onWorkerd } from '../lib/transport.js';

/** Algorithms this library can verify. */
export const SUPPORTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
export type SupportedAlgorithm = (typeof SUPPORTED_ALGORITHMS)[number];

interface AlgorithmParams {
  hash: string;
  pss: boolean;
  saltLength: number;
}

const PARAMS: Readonly<Record<SupportedAlgorithm, AlgorithmParams>> = {
  RS256: { hash: 'sha256', pss: false, saltLength: 0 },
  RS384: { hash: 'sha384', pss: false, saltLength: 0 },
  RS512: { hash: 'sha512', pss: false, saltLength: 0 },
  PS256: { hash: 'sha256', pss: true, saltLength: 32 },
  PS384: { hash: 'sha384', pss: true, saltLength: 48 },
  PS512: { hash: 'sha512', pss: true, saltLength: 64 },
};

export function isSupportedAlgorithm(alg: string): alg is SupportedAlgorithm {
  return Object.hasOwn(PARAMS, alg);
}

/** True when `signature` is a valid `alg` signature of `data` under `key`. Never throws. */
export function verifySignature(alg: SupportedAlgorithm, data: Buffer, key: KeyObject, signature: Buffer): boolean {
  const params = PARAMS[alg];
  try {
    if (!params.pss) return verify(params.hash, data, key, signature);
    return verify(params.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength }, signature);
  } catch {
    return false;
  }
}

/** True when `alg` must be verified asynchronously, with {@link verifySignatureInPool}: PS* on workerd. */
export function needsWebCrypto(alg: SupportedAlgorithm): boolean {
  return PARAMS[alg].pss && onWorkerd();
}

/** WebCrypto keys made from `KeyObject`s, per hash (a CryptoKey is bound to one). */
const webCryptoKeys = new WeakMap<KeyObject, Map<string, Promise<webcrypto.CryptoKey>>>();

async function verifyWithWebCrypto(params: AlgorithmParams, data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  let byHash = webCryptoKeys.get(key);
  if (!byHash) webCryptoKeys.set(key, (byHash = new Map<string, Promise<webcrypto.CryptoKey>>()));
  const hash = `SHA-${params.hash.slice(3)}`;
  let imported = byHash.get(hash);
  if (!imported) {
    // A public KeyObject exports as { kty, n, e }.
    imported = globalThis.crypto.subtle.importKey('jwk', key.export({ format: 'jwk' }), { name: 'RSA-PSS', hash }, false, ['verify']);
    byHash.set(hash, imported);
  }
  return globalThis.crypto.subtle.verify({ name: 'RSA-PSS', saltLength: params.saltLength }, await imported, signature, data);
}

/**
 * The same check in libuv's thread pool (`crypto.verify` with a callback): the event loop is free
 * meanwhile; on workerd, PS* through WebCrypto. Resolves `false` on any error, like {@link verifySignature}.
 */
export function verifySignatureInPool(alg: SupportedAlgorithm, data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  const params = PARAMS[alg];
  if (onWorkerd()) return params.pss ? verifyWithWebCrypto(params, data, key, signature).catch(() => false) : Promise.resolve(verifySignature(alg, data, key, signature));
  const input: KeyObject | VerifyKeyObjectInput | VerifyPublicKeyInput = params.pss
    ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength }
    : key;
  return new Promise((resolve) => {
    try {
      verify(params.hash, data, input, signature, (error, ok) => { resolve(!error && ok); });
    } catch {
      resolve(false);
    }
  });
}
