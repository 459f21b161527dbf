/** Shared test fixtures: keys generated once per worker, a JWKS server, and token minting. */
import { generateSigningKey, signJwt, type SigningKey } from '../../src/testing/sign-jwt.js';
import { json, startLoopback, type Loopback } from './loopback.js';

export const KEY = generateSigningKey({ kid: 'key-1' });
export const KEY2 = generateSigningKey({ kid: 'key-2' });

export const NOW_MS = Date.UTC(2026, 10, 21, 12, 0, 0);
export const NOW_SEC = NOW_MS / 1000;

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

export function mint(baseUrl: string, overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
  return signJwt(claims(baseUrl, overrides), key, { cty: 't1', ...header });
}

/** A JWKS endpoint on loopback; `keys` can be swapped to simulate rotation. */
export async function startJwksServer(keys: SigningKey[] = [KEY]): Promise<Loopback & { setKeys(k: object[]): void }> {
  let current: object[] = keys.map((k) => k.jwk);
  const lb = await startLoopback((req, res) => {
    json(res, 200, { keys: current });
  });
  return Object.assign(lb, { setKeys(k: object[]) { current = k; } });
}
