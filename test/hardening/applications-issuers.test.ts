/**
 * Applications and issuers stay in their lane: with `applications`, a token of another application
 * is a 401 from `authenticate` and every guard, before any policy request; with several issuers,
 * each has its own policy API and cache, and a policy from one issuer's IAM never decides a token
 * of another.
 */
import { describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { driverCanWrite, examplePolicy, expectAuthzError, useIam, VEHICLE, type Iam } from '../helpers/index.js';

/** Two IAMs with a policy of the same application each; A's JWKS serves the tokens of both. */
const iamA = useIam({ policy: driverCanWrite('a1', 'app-1') });
const iamB = useIam({ policy: examplePolicy('b1', 'app-1') });
const WVW1 = { type: 'VIN', value: 'WVW1' };

describe('applications', () => {
  test('a token of an application not listed: 401 ERR_TOKEN_INVALID from authenticate and guards, no policy request', async () => {
    const authz = iamA.authorizer({ applications: ['app-1'] });
    const before = iamA.requestsTo('policy').length;
    const foreign = iamA.token({ app: 'app-foreign' });
    const error = await expectAuthzError(authz.authenticate(`Bearer ${foreign}`), 'ERR_TOKEN_INVALID', 401);
    expect(error.message).toMatch(/application "app-foreign" is not accepted/);
    // Twice: a refused token is not cached as accepted.
    await expectAuthzError(authz.authenticate(`Bearer ${foreign}`), 'ERR_TOKEN_INVALID', 401);
    const guards = createGuards(authz);
    await expectAuthzError(guards.requirePermission(VEHICLE, 'READ', 'VIN', () => 'WVW1')(`Bearer ${foreign}`, {}), 'ERR_TOKEN_INVALID', 401);
    await expectAuthzError(guards.authenticate()(`Bearer ${foreign}`, {}), 'ERR_TOKEN_INVALID', 401);
    await expectAuthzError(authz.check(`Bearer ${foreign}`, { service: VEHICLE, permission: 'READ', resource: WVW1 }), 'ERR_TOKEN_INVALID', 401);
    expect(iamA.requestsTo('policy').length).toBe(before);
    // The listed application works as usual.
    const { decision } = await authz.check(iamA.bearer(), { service: VEHICLE, permission: 'READ', resource: WVW1 });
    expect(decision.granted).toBe(true);
  });

  test('ready() warms exactly the listed applications (with policyToken)', async () => {
    iamA.policy = examplePolicy('r1', 'app-1');
    const authz = iamA.authorizer({ applications: ['app-1'], policyToken: () => Promise.resolve('service-token') });
    await authz.ready();
    expect(iamA.requestsTo('policy').length).toBe(1);
    await expect(authz.ready({ applications: ['app-2'] })).rejects.toThrow(/"applications" lists "app-2"/);
  });

  test('applications: a non-empty array of non-empty strings', () => {
    expect(() => createAuthorizer({ baseUrl: iamA.url, applications: [] })).toThrow(/"applications"/);
    expect(() => createAuthorizer({ baseUrl: iamA.url, applications: 'app-1' as never })).toThrow(/"applications"/);
  });
});

describe('several issuers', () => {
  const issuerA = (): string => `${iamA.url}/a/authentication/v1`;
  const issuerB = (): string => `${iamA.url}/b/authentication/v1`;

  test('policyUrl maps each issuer to its policy API; a policy of issuer A never decides a token of B', async () => {
    const authz = iamA.authorizer({
      issuer: [issuerA(), issuerB()],
      jwksUri: { [issuerA()]: iamA.jwksUri, [issuerB()]: iamA.jwksUri },
      policyUrl: { [issuerA()]: iamA.policyUrl, [issuerB()]: iamB.policyUrl },
    });
    const a = await authz.authenticate(iamA.bearer({ iss: issuerA(), jti: 'a' }));
    const b = await authz.authenticate(iamA.bearer({ iss: issuerB(), jti: 'b' }));
    const write = { service: VEHICLE, permission: 'WRITE', resource: WVW1 };
    const aBefore = iamA.requestsTo('policy').length;
    const bBefore = iamB.requestsTo('policy').length;
    // A first: its policy (DRIVER may write) is cached, and must not serve B's same application.
    expect((await authz.authorize(a, write)).granted).toBe(true);
    expect((await authz.authorize(b, write))).toMatchObject({ granted: false, changeId: 'b1' });
    expect(await authz.accessible(b, { service: VEHICLE, permission: 'WRITE', type: 'VIN' })).toStrictEqual([]);
    expect(await authz.accessible(a, { service: VEHICLE, permission: 'WRITE', type: 'VIN' })).toStrictEqual(['WVW1']);
    expect((await authz.permissionsFor(b, { service: VEHICLE, resource: WVW1 })).map((p) => p.permission)).toStrictEqual(['READ']);
    // Each policy API saw only its own issuer's tokens.
    const sent = (iam: Iam, from: number): string[] => iam.requestsTo('policy').slice(from).map((r) => r.headers.authorization ?? '');
    expect(sent(iamA, aBefore).every((h) => h === `Bearer ${a.token}`)).toBe(true);
    expect(sent(iamB, bBefore).every((h) => h === `Bearer ${b.token}`)).toBe(true);
    expect(sent(iamB, bBefore).length).toBeGreaterThan(0);
  });

  test('by default each issuer of the IAM shape uses its own IAM\'s policy API', async () => {
    const issuers = [iamA.issuer, iamB.issuer];
    const authz = iamA.authorizer({ issuer: issuers, jwksUri: { [issuers[0] as string]: iamA.jwksUri, [issuers[1] as string]: iamA.jwksUri } });
    const b = await authz.authenticate(iamA.bearer({ iss: issuers[1] }));
    const before = iamB.requests.length;
    const beforeA = iamA.requestsTo('policy').length;
    expect((await authz.authorize(b, { service: VEHICLE, permission: 'READ', resource: WVW1 })).changeId).toBe('b1');
    expect(iamB.requests.slice(before).map((r) => r.url)).toContain('/policy/v1/roles');
    expect(iamA.requestsTo('policy').length).toBe(beforeA);
  });

  test('with several issuers, one policyUrl string is refused; map keys must be issuers', () => {
    const issuer = [issuerA(), issuerB()];
    expect(() => createAuthorizer({ issuer, policyUrl: iamA.policyUrl })).toThrow(/several issuers, "policyUrl" must map/);
    expect(() => createAuthorizer({ issuer, policyUrl: { 'https://other/authentication/v1': iamA.policyUrl } })).toThrow(/"policyUrl" names/);
  });

  test('an issuer without a policy API: its decisions are a 503, never another issuer\'s policy', async () => {
    const odd = `${iamA.url}/odd-issuer`;
    const authz = iamA.authorizer({ issuer: [issuerA(), odd], jwksUri: { [issuerA()]: iamA.jwksUri, [odd]: iamA.jwksUri }, policyUrl: { [issuerA()]: iamA.policyUrl } });
    const o = await authz.authenticate(iamA.bearer({ iss: odd }));
    await expectAuthzError(authz.authorize(o, { service: VEHICLE, permission: 'READ', resource: WVW1 }), 'ERR_POLICY_UNAVAILABLE', 503);
  });
});
