/**
 * `ready()` with several issuers reports per issuer: one IAM down does not make it reject while
 * another is up (that issuer's tokens still get 503); every issuer down still rejects.
 */
import { afterEach, expect, test } from 'vitest';
import { Authorizers, Clock, json, KEY, mint, startLoopback, type Loopback } from '../helpers/index.js';

const authorizers = new Authorizers();
const servers: Loopback[] = [];
afterEach(async () => {
  await authorizers.closeAll();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function iam(up: boolean): Promise<Loopback> {
  const lb = await startLoopback((_req, res) => { json(res, up ? 200 : 503, up ? { keys: [KEY.jwk] } : { error: 'down' }); });
  servers.push(lb);
  return lb;
}

const jwks = { timeoutMs: 2_000, minRefreshIntervalMs: 1_000 };

test('one issuer down: ready() resolves with a report naming it; its tokens get 503, the other\'s verify', async () => {
  const [up, down] = [await iam(true), await iam(false)];
  const issuers = [`${up.url}/authentication/v1`, `${down.url}/authentication/v1`];
  const authz = authorizers.create({ issuer: issuers, jwks, now: new Clock().now });
  const report = await authz.ready();
  expect(report).toStrictEqual({
    issuers: {
      [issuers[0]!]: { ready: true },
      [issuers[1]!]: { ready: false, code: 'ERR_JWKS_UNAVAILABLE', misconfigured: false, message: expect.stringContaining('503') as string },
    },
  });
  expect(JSON.parse(JSON.stringify(report))).toStrictEqual(report);
  await expect(authz.authenticate(`Bearer ${mint(up.url)}`)).resolves.toMatchObject({ claims: { iss: issuers[0] } });
  await expect(authz.authenticate(`Bearer ${mint(down.url)}`)).rejects.toMatchObject({ status: 503 });
  expect(authz.status().issuers[issuers[1]!]).toMatchObject({ state: 'cold', consecutiveFailures: 1 });
});

test('every issuer down: ready() rejects with a 503', async () => {
  const [a, b] = [await iam(false), await iam(false)];
  const authz = authorizers.create({ issuer: [`${a.url}/authentication/v1`, `${b.url}/authentication/v1`], jwks });
  await expect(authz.ready()).rejects.toMatchObject({ status: 503, code: 'ERR_JWKS_UNAVAILABLE' });
});
