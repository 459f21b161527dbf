/**
 * One RS256 IAM token and the key material around it, shared by the bench scripts. The claims
 * follow `test/helpers/tokens.ts` (`claims()`), with a real clock so the token is valid now.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { generateSigningKey, signJwt, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';

export const BASE_URL = 'https://iam.example.com';
export const ISSUER = `${BASE_URL}/authentication/v1`;

export interface BenchFixture {
  key: SigningKey;
  /** `{ keys: [publicJwk] }`, for `createAuthorizer({ localJwks })`. */
  jwks: { keys: Record<string, string>[] };
  token: string;
  /** `Bearer <token>`. */
  authorization: string;
  /** The public key as a KeyObject built from the published JWK. */
  publicKey: KeyObject;
  /** The bytes the signature covers, `base64url(header).base64url(payload)`. */
  signingInput: Buffer;
  signature: Buffer;
}

export function createFixture(): BenchFixture {
  const key = generateSigningKey({ kid: 'bench-key-1' });
  const nowSec = Math.floor(Date.now() / 1000);
  const token = signJwt(
    {
      jti: 'jti-bench',
      iss: ISSUER,
      sub: 'actor-alice',
      aud: 'tenant-1',
      tid: 'tenant-1',
      exp: nowSec + 24 * 3600,
      iat: nowSec,
      acc: 'acc-1',
      app: 'app-1',
      ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }],
    },
    key,
    { cty: 't1' },
  );
  const lastDot = token.lastIndexOf('.');
  return {
    key,
    jwks: { keys: [key.jwk] },
    token,
    authorization: `Bearer ${token}`,
    publicKey: createPublicKey({ key: key.jwk, format: 'jwk' }),
    signingInput: Buffer.from(token.slice(0, lastDot), 'latin1'),
    signature: Buffer.from(token.slice(lastDot + 1), 'base64url'),
  };
}
