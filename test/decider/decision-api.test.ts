/**
 * Beyond a yes/no (issue #11 §1–3) against the development IAM on loopback: `accessible` lists the
 * resources of a kind the caller may act on, `authorizeMany` decides a batch with one policy
 * lookup, `permissionsFor` lists what the caller holds on one resource — same policy rules as
 * `authorize` (a policy that cannot be had is a 503, never a guess).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { channels, createAuthorizer, PolicyUnavailableError, type Authorizer, type Identity } from '../../src/index.js';
import { startDevIam, type DevIam, type DevIamConfig } from 'iam-authz-dev';

const CONFIG: DevIamConfig = {
  idps: [{ key: 'dev', builtin: true }],
  applications: [{
    id: 'app-1',
    serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }, { key: 'fleet-service', permissions: ['VIEW'] }],
    roles: [
      { key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } },
      { key: 'OWNER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } },
      { key: 'FLEET', permissions: { 'fleet-service': ['VIEW'] } },
    ],
  }],
  actors: [{
    id: 'actor-carol', idp: 'dev', subject: 'carol', account: 'acc-1', application: 'app-1',
    tenants: { 'tenant-1': [
      { r: ['DRIVER'], c: ['VIN=A', 'VIN=B'] },
      { r: ['OWNER'], c: ['VIN=C', 'VIN=B', 'VIN=x=y'], n: ['node-1'] },
      { r: ['FLEET', 'GHOST'], c: ['FLEET=F1'] },
      { r: ['GHOST'], c: ['VIN=D'], n: ['node-2'] },
    ] },
  }],
};

let iam: DevIam;
let authorizer: Authorizer;
let carol: Identity;
let fetches = 0;
const onFetched = () => { fetches++; };

beforeAll(async () => {
  iam = await startDevIam({ config: CONFIG, console: false });
  authorizer = createAuthorizer({ baseUrl: iam.baseUrl });
  carol = await authorizer.authenticate(`Bearer ${iam.mintToken({ actor: 'actor-carol', tenantId: 'tenant-1' })}`);
  subscribe(channels.policyFetched, onFetched);
});
afterAll(async () => {
  unsubscribe(channels.policyFetched, onFetched);
  await authorizer.close();
  await iam.close();
});

describe('accessible', () => {
  test('the values of a type on which the permission is held: sorted, de-duplicated', async () => {
    expect(await authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ', type: 'VIN' })).toStrictEqual(['A', 'B', 'C', 'x=y']);
    expect(await authorizer.accessible(carol, { service: 'vehicle-service', permission: 'WRITE', type: 'VIN' })).toStrictEqual(['B', 'C', 'x=y']);
    expect(await authorizer.accessible(carol, { service: 'fleet-service', permission: 'VIEW', type: 'FLEET' })).toStrictEqual(['F1']);
    expect(await authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ', node: true })).toStrictEqual(['node-1']);
  });

  test('explain: each value with only the roles that grant there', async () => {
    expect(await authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ', type: 'VIN', explain: true })).toStrictEqual([
      { value: 'A', roles: ['DRIVER'] },
      { value: 'B', roles: ['DRIVER', 'OWNER'] },
      { value: 'C', roles: ['OWNER'] },
      { value: 'x=y', roles: ['OWNER'] },
    ]);
  });

  test('every listed value is granted by authorize, and every value authorize grants is listed', async () => {
    const listed = await authorizer.accessible(carol, { service: 'vehicle-service', permission: 'WRITE', type: 'VIN' });
    for (const value of ['A', 'B', 'C', 'D', 'x=y', 'E']) {
      const decision = await authorizer.authorize(carol, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value } });
      expect(listed.includes(value), value).toBe(decision.granted);
    }
  });

  test('a type the token never names: [] without a policy fetch', async () => {
    const other = createAuthorizer({ baseUrl: iam.baseUrl });
    try {
      const identity = await other.authenticate(`Bearer ${carol.token}`);
      const before = fetches;
      expect(await other.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'PLATE' })).toStrictEqual([]);
      expect(fetches).toBe(before);
    } finally {
      await other.close();
    }
  });

  test('bad queries are TypeErrors naming the field', async () => {
    await expect(authorizer.accessible(carol, { service: '', permission: 'READ', type: 'VIN' })).rejects.toThrow(/"service"/);
    await expect(authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ' })).rejects.toThrow(/"type"/);
    await expect(authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ', type: 'VIN=' })).rejects.toThrow(/"type"/);
    await expect(authorizer.accessible(carol, { service: 'vehicle-service', permission: 'READ', type: 'VIN', node: true })).rejects.toThrow(/either/);
  });
});

describe('authorizeMany', () => {
  test('one decision per query, in order, mixing services, permissions and resources; one policy lookup', async () => {
    const fresh = createAuthorizer({ baseUrl: iam.baseUrl });
    try {
      const identity = await fresh.authenticate(`Bearer ${carol.token}`);
      const before = fetches;
      const decisions = await fresh.authorizeMany(identity, [
        { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'A' } },
        { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'A' } },
        { service: 'fleet-service', permission: 'VIEW', resource: { type: 'FLEET', value: 'F1' } },
        { service: 'vehicle-service', permission: 'WRITE', resource: { node: 'node-1' } },
        { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'nowhere' } },
        { service: 'vehicle-service', permission: 'READ', resource: { type: '', value: 'A' } },
        { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'D' } },
      ]);
      expect(decisions.map((d) => [d.granted, d.reason])).toStrictEqual([
        [true, 'GRANTED'], [false, 'PERMISSION_NOT_GRANTED'], [true, 'GRANTED'], [true, 'GRANTED'],
        [false, 'NO_MATCHING_REFERENCE'], [false, 'INVALID_RESOURCE'], [false, 'ROLE_NOT_IN_POLICY'],
      ]);
      expect(fetches - before).toBe(1);
      // The same answers as one authorize per query.
      const one = await fresh.authorize(identity, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'A' } });
      expect(decisions[1]).toStrictEqual(one);
    } finally {
      await fresh.close();
    }
  });

  test('an empty batch is [], a bad query a TypeError naming its index', async () => {
    expect(await authorizer.authorizeMany(carol, [])).toStrictEqual([]);
    await expect(authorizer.authorizeMany(carol, [{ service: 'vehicle-service', permission: 'READ', resource: { node: 'n' } }, { service: 'vehicle-service', permission: '', resource: { node: 'n' } }]))
      .rejects.toThrow(/queries\[1\]: "permission"/);
  });
});

describe('permissionsFor', () => {
  test('the permissions held on one resource, with their granting roles', async () => {
    expect(await authorizer.permissionsFor(carol, { service: 'vehicle-service', resource: { type: 'VIN', value: 'B' } })).toStrictEqual([
      { permission: 'READ', roles: ['DRIVER', 'OWNER'] },
      { permission: 'WRITE', roles: ['OWNER'] },
    ]);
    expect(await authorizer.permissionsFor(carol, { service: 'vehicle-service', resource: { type: 'VIN', value: 'A' } })).toStrictEqual([{ permission: 'READ', roles: ['DRIVER'] }]);
    expect(await authorizer.permissionsFor(carol, { service: 'fleet-service', resource: { type: 'VIN', value: 'A' } })).toStrictEqual([]);
    expect(await authorizer.permissionsFor(carol, { service: 'vehicle-service', resource: { type: 'VIN', value: 'nowhere' } })).toStrictEqual([]);
  });
});

describe('no usable policy: 503, never a guess', () => {
  test('accessible, authorizeMany and permissionsFor reject with ERR_POLICY_UNAVAILABLE', async () => {
    const broken = createAuthorizer({ baseUrl: iam.baseUrl, policyUrl: 'http://127.0.0.1:9/policy/v1/roles', policy: { timeoutMs: 500 } });
    try {
      const identity = await broken.authenticate(`Bearer ${carol.token}`);
      await expect(broken.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'VIN' })).rejects.toBeInstanceOf(PolicyUnavailableError);
      await expect(broken.authorizeMany(identity, [{ service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'A' } }])).rejects.toBeInstanceOf(PolicyUnavailableError);
      await expect(broken.permissionsFor(identity, { service: 'vehicle-service', resource: { type: 'VIN', value: 'A' } })).rejects.toBeInstanceOf(PolicyUnavailableError);
    } finally {
      await broken.close();
    }
  });
});
