/**
 * The distinct-token path (`tokenCache: false`, or a token seen for the first time): a token whose
 * keys are at hand is verified on the spot, and the guard's answer is readable at once by an
 * adapter (no trips through the microtask queue, no async frames per request) — while every
 * refusal still rejects.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startDevIam, type DevIam, type DevIamConfig } from 'iam-authz-dev';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createGuards } from '../../src/adapter/index.js';
import { settledValue } from '../../src/adapter/internal.js';
import { createAuthorizer, type Authorizer } from '../../src/index.js';

const CONFIG: DevIamConfig = {
  idps: [{ key: 'dev', builtin: true }],
  applications: [{
    id: 'app-1',
    serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }],
    roles: [{ key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } }],
  }],
  actors: [{
    id: 'actor-carol', idp: 'dev', subject: 'carol', account: 'acc-1', application: 'app-1',
    tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=A'], n: [] }] },
  }],
};

let iam: DevIam;
let authorizer: Authorizer;
const mint = (): string => `Bearer ${iam.mintToken({ actor: 'actor-carol', tenantId: 'tenant-1' })}`;

beforeAll(async () => {
  iam = await startDevIam({ config: CONFIG, console: false });
  authorizer = createAuthorizer({ baseUrl: iam.baseUrl, audience: 'tenant-1', tokenCache: false });
  await authorizer.ready();
  // The policy cached, as on a running server.
  await authorizer.authorize(await authorizer.authenticate(mint()), { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'A' } });
});
afterAll(async () => {
  await authorizer.close();
  await iam.close();
});

test('a new token, verified on the spot, is granted with an answer an adapter reads without awaiting', async () => {
  const guard = createGuards<{ vin: string }>(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.vin);
  for (let i = 0; i < 3; i++) {
    const authorization = mint();
    const answer = guard(authorization, { vin: 'A' });
    const state = settledValue(answer);
    expect(state?.decision?.granted).toBe(true);
    expect(state?.claims.sub).toBe('actor-carol');
    expect(await answer).toBe(state);
    const identity = settledValue(authorizer.authenticate(authorization));
    expect(identity?.claims.sub).toBe('actor-carol');
  }
});

test('refusals still reject: a denied permission, a forged signature, no token', async () => {
  const guard = createGuards<{ vin: string }>(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.vin);
  const denied = guard(mint(), { vin: 'B' });
  expect(settledValue(denied)).toBeUndefined();
  await expect(denied).rejects.toMatchObject({ status: 403 });
  const token = mint();
  const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  const refused = authorizer.authenticate(forged);
  expect(settledValue(refused)).toBeUndefined();
  await expect(refused).rejects.toMatchObject({ status: 401 });
  await expect(guard(forged, { vin: 'A' })).rejects.toMatchObject({ status: 401 });
  await expect(guard(undefined, { vin: 'A' })).rejects.toMatchObject({ status: 401 });
});

test('authenticate(): a new token\'s state is read without awaiting; refusals and anonymity still hold', async () => {
  const guards = createGuards<unknown>(authorizer);
  const authenticate = guards.authenticate();
  const answer = authenticate(mint(), {});
  const state = settledValue(answer);
  expect(state?.claims.sub).toBe('actor-carol');
  expect(state?.decision).toBeUndefined();
  expect(await answer).toBe(state);
  const token = mint();
  const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  const refused = authenticate(forged, {});
  expect(settledValue(refused)).toBeUndefined();
  await expect(refused).rejects.toMatchObject({ status: 401, headers: { 'www-authenticate': expect.stringContaining('invalid_token') } });
  await expect(authenticate(undefined, {})).rejects.toMatchObject({ status: 401 });
  await expect(guards.authenticate({ optional: true })(undefined, {})).resolves.toBeUndefined();
  await expect(guards.authenticate({ optional: true })('Bearer x', {})).rejects.toMatchObject({ status: 401 });
});

test('a caller granted once is not kept alive by the authorizer (nothing per caller outlives its request)', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'A' } } as const;
  const refs: WeakRef<object>[] = [];
  // In a function of its own, so that no frame of this test holds the last caller.
  const grantOnce = async (): Promise<void> => {
    const identity = await authorizer.authenticate(mint());
    expect((await authorizer.authorize(identity, query)).granted).toBe(true);
    refs.push(new WeakRef(identity));
  };
  for (let i = 0; i < 8; i++) await grantOnce();
  // Let the settled promises and this loop's frames go, then collect.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
  expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
});
