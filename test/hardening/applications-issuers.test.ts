/**
 * Applications and issuers stay in their lane: with `applications`, a token of another application
 * is a 401 from `authenticate` and every guard, before any policy request; with several issuers,
 * each has its own policy API and cache, and a policy from one issuer's IAM never decides a token
 * of another.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { Authorizers, Clock, driverCanWrite, examplePolicy, expectAuthzError, mint, startJwksServer, startPolicyServer, VEHICLE, type Loopback, type PolicyServer } from '../helpers/index.js';

let jwks: Loopback;
let policyA: PolicyServer;
let policyB: PolicyServer;
const authorizers = new Authorizers();
const WVW1 = { type: 'VIN', value: 'WVW1' };

beforeAll(async () => {
  jwks = await startJwksServer();
  policyA = await startPolicyServer(driverCanWrite('a1', 'app-1'));
  policyB = await startPolicyServer(examplePolicy('b1', 'app-1'));
});
afterAll(async () => {
  await authorizers.closeAll();
  await Promise.all([jwks.close(), policyA.close(), policyB.close()]);
});

describe('applications', () => {
  test('a token of an application not listed: 401 ERR_TOKEN_INVALID from authenticate and guards, no policy request', async () => {
    const authz = authorizers.create({ baseUrl: jwks.url, policyUrl: policyA.url, now: new Clock().now, applications: ['app-1'] });
    const before = policyA.requests.length;
    const foreign = mint(jwks.url, { app: 'app-foreign' });
    const error = await expectAuthzError(authz.authenticate(`Bearer ${foreign}`), 'ERR_TOKEN_INVALID', 401);
    expect(error.message).toMatch(/application "app-foreign" is not accepted/);
    // Twice: a refused token is not cached as accepted.
    await expectAuthzError(authz.authenticate(`Bearer ${foreign}`), 'ERR_TOKEN_INVALID', 401);
    const guards = createGuards(authz);
    await expectAuthzError(guards.requirePermission(VEHICLE, 'READ', 'VIN', () => 'WVW1')(`Bearer ${foreign}`, {}), 'ERR_TOKEN_INVALID', 401);
    await expectAuthzError(guards.authenticate()(`Bearer ${foreign}`, {}), 'ERR_TOKEN_INVALID', 401);
    await expectAuthzError(authz.check(`Bearer ${foreign}`, { service: VEHICLE, permission: 'READ', resource: WVW1 }), 'ERR_TOKEN_INVALID', 401);
    expect(policyA.requests.length).toBe(before);
    // The listed application works as usual.
    const { decision } = await authz.check(`Bearer ${mint(jwks.url)}`, { service: VEHICLE, permission: 'READ', resource: WVW1 });
    expect(decision.granted).toBe(true);
  });

  test('ready() warms exactly the listed applications (with policyToken)', async () => {
    const server = await startPolicyServer(examplePolicy('r1', 'app-1'));
    try {
      const authz = authorizers.create({
        baseUrl: jwks.url, policyUrl: server.url, now: new Clock().now, applications: ['app-1'], policyToken: () => Promise.resolve('service-token'),
      });
      await authz.ready();
      expect(server.requests.length).toBe(1);
      await expect(authz.ready({ applications: ['app-2'] })).rejects.toThrow(/"applications" lists "app-2"/);
    } finally {
      await server.close();
    }
  });

  test('applications: a non-empty array of non-empty strings', () => {
    expect(() => createAuthorizer({ baseUrl: jwks.url, applications: [] })).toThrow(/"applications"/);
    expect(() => createAuthorizer({ baseUrl: jwks.url, applications: 'app-1' as never })).toThrow(/"applications"/);
  });
});

describe('several issuers', () => {
  const issuerA = (): string => `${jwks.url}/a/authentication/v1`;
  const issuerB = (): string => `${jwks.url}/b/authentication/v1`;

  test('policyUrl maps each issuer to its policy API; a policy of issuer A never decides a token of B', async () => {
    const authz = authorizers.create({
      issuer: [issuerA(), issuerB()],
      jwksUri: { [issuerA()]: jwks.url, [issuerB()]: jwks.url },
      policyUrl: { [issuerA()]: policyA.url, [issuerB()]: policyB.url },
      now: new Clock().now,
    });
    const a = await authz.authenticate(`Bearer ${mint(jwks.url, { iss: issuerA(), jti: 'a' })}`);
    const b = await authz.authenticate(`Bearer ${mint(jwks.url, { iss: issuerB(), jti: 'b' })}`);
    const write = { service: VEHICLE, permission: 'WRITE', resource: WVW1 };
    const aBefore = policyA.requests.length;
    const bBefore = policyB.requests.length;
    // A first: its policy (DRIVER may write) is cached, and must not serve B's same application.
    expect((await authz.authorize(a, write)).granted).toBe(true);
    expect((await authz.authorize(b, write))).toMatchObject({ granted: false, changeId: 'b1' });
    expect(await authz.accessible(b, { service: VEHICLE, permission: 'WRITE', type: 'VIN' })).toStrictEqual([]);
    expect(await authz.accessible(a, { service: VEHICLE, permission: 'WRITE', type: 'VIN' })).toStrictEqual(['WVW1']);
    expect((await authz.permissionsFor(b, { service: VEHICLE, resource: WVW1 })).map((p) => p.permission)).toStrictEqual(['READ']);
    // Each policy API saw only its own issuer's tokens.
    const sent = (server: PolicyServer, from: number): string[] => server.requests.slice(from).map((r) => r.headers.authorization ?? '');
    expect(sent(policyA, aBefore).every((h) => h === `Bearer ${a.token}`)).toBe(true);
    expect(sent(policyB, bBefore).every((h) => h === `Bearer ${b.token}`)).toBe(true);
    expect(sent(policyB, bBefore).length).toBeGreaterThan(0);
  });

  test('by default each issuer of the IAM shape uses its own IAM\'s policy API', async () => {
    const issuers = [`${policyA.url}/authentication/v1`, `${policyB.url}/authentication/v1`];
    const authz = authorizers.create({ issuer: issuers, jwksUri: { [issuers[0] as string]: jwks.url, [issuers[1] as string]: jwks.url }, now: new Clock().now });
    const b = await authz.authenticate(`Bearer ${mint(jwks.url, { iss: issuers[1] })}`);
    const before = policyB.requests.length;
    const beforeA = policyA.requests.length;
    expect((await authz.authorize(b, { service: VEHICLE, permission: 'READ', resource: WVW1 })).changeId).toBe('b1');
    expect(policyB.requests.slice(before).map((r) => r.url)).toContain('/policy/v1/roles');
    expect(policyA.requests.length).toBe(beforeA);
  });

  test('with several issuers, one policyUrl string is refused; map keys must be issuers', () => {
    const issuer = [issuerA(), issuerB()];
    expect(() => createAuthorizer({ issuer, policyUrl: policyA.url })).toThrow(/several issuers, "policyUrl" must map/);
    expect(() => createAuthorizer({ issuer, policyUrl: { 'https://other/authentication/v1': policyA.url } })).toThrow(/"policyUrl" names/);
  });

  test('an issuer without a policy API: its decisions are a 503, never another issuer\'s policy', async () => {
    const odd = `${jwks.url}/odd-issuer`;
    const authz = authorizers.create({ issuer: [issuerA(), odd], jwksUri: { [issuerA()]: jwks.url, [odd]: jwks.url }, policyUrl: { [issuerA()]: policyA.url }, now: new Clock().now });
    const o = await authz.authenticate(`Bearer ${mint(jwks.url, { iss: odd })}`);
    await expectAuthzError(authz.authorize(o, { service: VEHICLE, permission: 'READ', resource: WVW1 }), 'ERR_POLICY_UNAVAILABLE', 503);
  });
});
