/**
 * The keyed fixtures: two signing keys, generated once per test run (global-setup.ts) and injected
 * here, and token minting with them. The loopback IAM that serves them is iam.ts.
 */
import { inject } from 'vitest';
import { signingKeyFromJwk, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { claims, signClaims } from './tokens.js';

const keys = inject('testKeys');
export const KEY = signingKeyFromJwk(keys.key1);
export const KEY2 = signingKeyFromJwk(keys.key2);

/** A token of the standard {@link claims} for `baseUrl`, signed by `key` ({@link KEY} unless told). */
export function mint(baseUrl: string, overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
  return signClaims(claims(baseUrl, overrides), key, header);
}
