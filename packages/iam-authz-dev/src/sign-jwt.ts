/**
 * Development-side signing: RSA key pairs and compact JWS tokens made with node:crypto. Used by the
 * development IAM and by tests; never by the verifier.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, constants, type KeyObject } from 'node:crypto';

/** An RSA key pair for signing test tokens, with its public JWK. */
export interface SigningKey {
  /** Key id, put in the JWK and in signed tokens' header. */
  kid: string;
  /** Signs. */
  privateKey: KeyObject;
  /** Verifies. */
  publicKey: KeyObject;
  /** The public JWK as published in a JWKS (`kty`, `n`, `e`, `kid`, `alg`, `use`). */
  jwk: Record<string, string>;
}

/** Generates an RSA signing key (2048 bits unless told otherwise). */
export function generateSigningKey(options: { kid?: string; modulusLength?: number; alg?: string } = {}): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048 });
  return fromKeyPair(privateKey, publicKey, options.kid ?? randomUUID(), options.alg ?? 'RS256');
}

/** Builds a {@link SigningKey} from a private JWK (e.g. a key kept in a config file). */
export function signingKeyFromJwk(jwk: Record<string, unknown>): SigningKey {
  const privateKey = createPrivateKey({ key: jwk as never, format: 'jwk' });
  return fromKeyPair(privateKey, createPublicKey(privateKey), typeof jwk.kid === 'string' ? jwk.kid : randomUUID(), 'RS256');
}

function fromKeyPair(privateKey: KeyObject, publicKey: KeyObject, kid: string, alg: string): SigningKey {
  const { n, e } = publicKey.export({ format: 'jwk' });
  return { kid, privateKey, publicKey, jwk: { kty: 'RSA', n: n as string, e: e as string, kid, alg, use: 'sig' } };
}

const HASH: Record<string, string> = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512', PS256: 'sha256', PS384: 'sha384', PS512: 'sha512' };

/** Signs `payload` as a compact JWS with `key`; `header.alg` (default RS256) picks the RSA algorithm. */
export function signJwt(payload: Record<string, unknown>, key: SigningKey, header: Record<string, unknown> = {}): string {
  const fullHeader = { alg: 'RS256', kid: key.kid, ...header };
  const alg = typeof fullHeader.alg === 'string' ? fullHeader.alg : '';
  const hash = HASH[alg];
  if (!hash) throw new TypeError(`signJwt: unsupported alg ${alg}`);
  const input = `${b64url(JSON.stringify(fullHeader))}.${b64url(JSON.stringify(payload))}`;
  const signer = alg.startsWith('PS')
    ? { key: key.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 }
    : key.privateKey;
  return `${input}.${sign(hash, Buffer.from(input), signer).toString('base64url')}`;
}

export function b64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}
