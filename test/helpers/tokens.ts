/**
 * The one standard claim set of the tests (spec §2.2) and the IAM header they are signed with.
 * Key-free: the key is the caller's (`KEY` of fixtures.ts, or {@link STATIC_KEY} where a file must
 * not generate one).
 */
import { signJwt, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { NOW_SEC } from './clock.js';

export { STATIC_KEY } from './static-key.js';

/**
 * Valid claims of a token issued by `${baseUrl}/authentication/v1` at {@link NOW_SEC}, valid for an
 * hour: actor-alice in tenant-1, application app-1, DRIVER on VIN=WVW1; then `overrides`.
 */
export function claims(baseUrl: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jti: 'jti-1',
    iss: `${baseUrl}/authentication/v1`,
    sub: 'actor-alice',
    aud: 'tenant-1',
    tid: 'tenant-1',
    exp: NOW_SEC + 3600,
    iat: NOW_SEC,
    acc: 'acc-1',
    app: 'app-1',
    ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }],
    ...overrides,
  };
}

/** Signs `payload` with `key` under the IAM header (`cty: t1`, then `header`). */
export function signClaims(payload: Record<string, unknown>, key: SigningKey, header: Record<string, unknown> = {}): string {
  return signJwt(payload, key, { cty: 't1', ...header });
}
