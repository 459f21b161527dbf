import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAuthorizer } from '../src/index.js';
import { mint, startJwksServer, NOW_MS } from './helpers/fixtures.js';

let jwks: Awaited<ReturnType<typeof startJwksServer>>;
beforeAll(async () => { jwks = await startJwksServer(); });
afterAll(async () => { await jwks.close(); });

test('verifies a token against a loopback JWKS', async () => {
  const authz = createAuthorizer({ baseUrl: jwks.url, now: () => NOW_MS });
  const id = await authz.authenticate(`Bearer ${mint(jwks.url)}`);
  expect(id.claims.sub).toBe('actor-alice');
  expect(id.claims.ars).toEqual([{ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] }]);
  await expect(authz.authenticate('Bearer abc.def.ghi')).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID', status: 401 });
  await authz.close();
});
