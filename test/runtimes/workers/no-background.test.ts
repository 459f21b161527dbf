/**
 * workerd cancels what a request leaves running once it has answered, so on Workers a stale JWKS
 * or policy is refreshed by the request that finds it, which waits for it (a background refresh
 * would never finish, and a kid removed or a role revoked would go unnoticed). Simulated here on
 * Node by workerd's user agent; `.ci/workers` checks the same in workerd itself.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { createAuthorizer } from '../../../src/index.js';
import { abandoned, joinShared } from '../../../src/lib/transport.js';
import { useTransportForTesting } from '../../../src/lib/upstream.js';
import { Clock, examplePolicy, KEY, KEY2, mint, startJwksServer, startPolicyServer, VEHICLE, type Loopback, type PolicyServer } from '../../helpers/index.js';

let jwks: Loopback & { setKeys(k: object[]): void };
let policy: PolicyServer;
let clock: Clock;
const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');

beforeAll(async () => {
  jwks = await startJwksServer([KEY]);
  policy = await startPolicyServer();
});
afterAll(async () => {
  await jwks.close();
  await policy.close();
});
beforeEach(() => {
  clock = new Clock();
  jwks.setKeys([KEY.jwk]);
  jwks.requests.length = 0;
  policy.policy = examplePolicy('c1');
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: 'Cloudflare-Workers' }, configurable: true, writable: true });
});
afterEach(() => {
  if (saved) Object.defineProperty(globalThis, 'navigator', saved);
  else Reflect.deleteProperty(globalThis, 'navigator');
  useTransportForTesting(undefined);
});

const make = () => createAuthorizer({
  issuer: `${jwks.url}/authentication/v1`,
  jwksUri: `${jwks.url}/jwks.json`,
  policyUrl: `${policy.url}/roles`,
  audience: 'tenant-1',
  now: () => clock.now(),
  jwks: { ttlMs: 1_000, minRefreshIntervalMs: 100, maxStaleMs: 60_000 },
  policy: { ttlMs: 1_000, minRefreshIntervalMs: 100, maxStaleMs: 60_000 },
});
const READ = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;

test('a stale JWKS is refreshed in the request that finds it: a removed kid is a 401 there', async () => {
  const a = make();
  const token = `Bearer ${mint(jwks.url)}`;
  await a.authenticate(token);
  jwks.setKeys([KEY2.jwk]);
  clock.advance(1_001);
  // The token is in the verified-token cache: only a refresh within this request can refuse it.
  await expect(a.authenticate(token)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_INVALID' });
  expect(jwks.requests).toHaveLength(2);
  await a.close();
});

test('a stale policy is revalidated in the request that finds it: a revoked role is denied there', async () => {
  const a = make();
  const identity = await a.authenticate(`Bearer ${mint(jwks.url)}`);
  expect((await a.authorize(identity, READ)).granted).toBe(true);
  const revoked = examplePolicy('c2');
  policy.policy = { ...revoked, roles: revoked.roles.filter((role) => role.key !== 'DRIVER') };
  clock.advance(1_001);
  expect(await a.authorize(identity, READ)).toMatchObject({ granted: false, changeId: 'c2' });
  await a.close();
});

test('a stale JWKS that cannot be refreshed is still served within maxStaleMs', async () => {
  const a = make();
  const token = `Bearer ${mint(jwks.url)}`;
  await a.authenticate(token);
  const { handler } = jwks;
  jwks.handler = (_req, res) => { res.writeHead(500).end(); };
  try {
    clock.advance(1_001);
    await expect(a.authenticate(token)).resolves.toMatchObject({ claims: { sub: 'actor-alice' } });
    expect(jwks.requests).toHaveLength(2);
  } finally {
    jwks.handler = handler;
  }
  await a.close();
});

test('a fetch left unsettled by a cancelled request is waited for at most its timeout, then replaced', async () => {
  // workerd drops a cancelled request's pending fetch without settling it: a request that joined
  // it goes on (its caller answers from what it holds, or 503), and the next one starts another.
  const never = new Promise<string>(() => undefined);
  await expect(joinShared(never, 50, 'gave up')).resolves.toBe('gave up');
  expect(abandoned(0, 50 + 1_000, 50)).toBe(false);
  expect(abandoned(0, 50 + 1_001, 50)).toBe(true);
  // Not on Node: there a fetch always settles (its timeout fires), and nothing is given up.
  Reflect.deleteProperty(globalThis, 'navigator');
  expect(abandoned(0, 1_000_000, 50)).toBe(false);
  const settled = Promise.resolve('settled');
  expect(joinShared(settled, 50, 'gave up')).toBe(settled);
});
