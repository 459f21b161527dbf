/**
 * The keyed fixtures: two signing keys, generated once per test run (global-setup.ts) and injected
 * here, token minting with them, and a loopback JWKS.
 */
import { inject } from 'vitest';
import { signingKeyFromJwk, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { json, startLoopback, type Loopback } from './loopback.js';
import { claims, signClaims } from './tokens.js';

const keys = inject('testKeys');
export const KEY = signingKeyFromJwk(keys.key1);
export const KEY2 = signingKeyFromJwk(keys.key2);

/** A token of the standard {@link claims} for `baseUrl`, signed by `key` ({@link KEY} unless told). */
export function mint(baseUrl: string, overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
  return signClaims(claims(baseUrl, overrides), key, header);
}

/** A JWKS endpoint on loopback; `keys` can be swapped to simulate rotation. */
export async function startJwksServer(keys: SigningKey[] = [KEY]): Promise<Loopback & { setKeys(k: object[]): void }> {
  let current: object[] = keys.map((k) => k.jwk);
  const lb = await startLoopback((req, res) => {
    json(res, 200, { keys: current });
  });
  return Object.assign(lb, { setKeys(k: object[]) { current = k; } });
}
