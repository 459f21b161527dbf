/**
 * workerd cancels what a request leaves running once it has answered, so on Workers a stale JWKS
 * or policy is refreshed by the request that finds it, which waits for it (a background refresh
 * would never finish, and a kid removed or a role revoked would go unnoticed). Simulated here on
 * Node by workerd's user agent; `.ci/workers` checks the same in workerd itself.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { abandoned, joinShared } from '../../../src/lib/transport.js';
import { useTransportForTesting } from '../../../src/lib/upstream.js';
import { examplePolicy, KEY2, useIam, VEHICLE } from '../../helpers/index.js';

const iam = useIam();
const { clock } = iam;
const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');

beforeEach(() => {
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: 'Cloudflare-Workers' }, configurable: true, writable: true });
});
afterEach(() => {
  if (saved) Object.defineProperty(globalThis, 'navigator', saved);
  else Reflect.deleteProperty(globalThis, 'navigator');
  useTransportForTesting(undefined);
});

const make = () => iam.authorizer({
  issuer: iam.issuer,
  jwksUri: iam.jwksUri,
  policyUrl: iam.policyUrl,
  audience: 'tenant-1',
  jwks: { ttlMs: 1_000, minRefreshIntervalMs: 100, maxStaleMs: 60_000 },
  policy: { ttlMs: 1_000, minRefreshIntervalMs: 100, maxStaleMs: 60_000 },
});
const READ = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;

test('a stale JWKS is refreshed in the request that finds it: a removed kid is a 401 there', async () => {
  const a = make();
  const token = iam.bearer();
  await a.authenticate(token);
  iam.keys = [KEY2.jwk];
  clock.advance(1_001);
  // The token is in the verified-token cache: only a refresh within this request can refuse it.
  await expect(a.authenticate(token)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_INVALID' });
  expect(iam.requestsTo('jwks')).toHaveLength(2);
  await a.close();
});

test('a stale policy is revalidated in the request that finds it: a revoked role is denied there', async () => {
  const a = make();
  const identity = await a.authenticate(iam.bearer());
  expect((await a.authorize(identity, READ)).granted).toBe(true);
  const revoked = examplePolicy('c2');
  iam.policy = { ...revoked, roles: revoked.roles.filter((role) => role.key !== 'DRIVER') };
  clock.advance(1_001);
  expect(await a.authorize(identity, READ)).toMatchObject({ granted: false, changeId: 'c2' });
  await a.close();
});

test('a stale JWKS that cannot be refreshed is still served within maxStaleMs', async () => {
  const a = make();
  const token = iam.bearer();
  await a.authenticate(token);
  iam.down = 500;
  clock.advance(1_001);
  await expect(a.authenticate(token)).resolves.toMatchObject({ claims: { sub: 'actor-alice' } });
  expect(iam.requestsTo('jwks')).toHaveLength(2);
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
