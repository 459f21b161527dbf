/**
 * The check end to end through `authorize()`: the resource query (step 3), INVALID_RESOURCE, and
 * exact-string matching with references that went through a real signed token and a real policy
 * document (JSON keeps the Unicode form and whitespace; nothing may normalise them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer, Decision } from '../../src/index.js';
import type { RolePolicy } from '../../src/types.js';
import { Clock } from '../helpers/clock.js';
import { examplePolicy, startPolicyServer, uniqueApp, VEHICLE, type PolicyServer } from '../helpers/policy-server.js';
import { Authorizers, identityFor, recordPolicyEvents } from '../policy/harness.js';

let server: PolicyServer;
const authorizers = new Authorizers();

beforeAll(async () => { server = await startPolicyServer(); });
afterEach(() => authorizers.closeAll());
afterAll(() => server.close());

function make(app: string, policy: RolePolicy = examplePolicy('c1', app)): Authorizer {
  server.policy = policy;
  server.requests.length = 0;
  return authorizers.forServer(server, new Clock(), { ttlMs: 60_000 });
}

describe('INVALID_RESOURCE', () => {
  test.each<[string, unknown, string]>([
    ['an empty type', { type: '', value: 'WVW1' }, '=WVW1'],
    ['an empty value', { type: 'VIN', value: '' }, 'VIN='],
    ['a type containing "="', { type: 'VIN=WVW1', value: 'x' }, 'VIN=WVW1=x'],
    ['a number as value', { type: 'VIN', value: 1 }, 'VIN='],
    ['a missing value', { type: 'VIN' }, 'VIN='],
    ['an empty node id', { node: '' }, ''],
    ['a non-string node id', { node: ['n1'] }, ''],
    ['null', null, ''],
    ['undefined', undefined, ''],
    ['a string', 'VIN=WVW1', ''],
  ])('%s denies without asking the policy API', async (_name, resource, reference) => {
    const app = uniqueApp();
    const authz = make(app);
    const events = recordPolicyEvents(app);
    try {
      const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], c: ['VIN=WVW1', 'VIN=WVW1=x', '=WVW1', 'VIN='], n: ['', 'n1'] }] });
      const d = await authz.authorize(id, { service: VEHICLE, permission: 'READ', resource: resource as never });
      expect(d).toEqual<Decision>({ granted: false, reference, roles: [], changeId: undefined, reason: 'INVALID_RESOURCE' });
      expect(server.requests).toHaveLength(0);
      expect(events.events.map((e) => [e.type, e.message.reason])).toEqual([['denied', 'INVALID_RESOURCE']]);
    } finally {
      events.dispose();
    }
  });

  test('an empty service or permission is a programming error (TypeError), never a grant', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app);
    await expect(authz.authorize(id, { service: '', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } })).rejects.toBeInstanceOf(TypeError);
    await expect(authz.authorize(id, { service: VEHICLE, permission: '', resource: { type: 'VIN', value: 'WVW1' } })).rejects.toBeInstanceOf(TypeError);
    await expect(authz.authorize(id, { service: VEHICLE, permission: undefined as never, resource: { type: 'VIN', value: 'WVW1' } })).rejects.toBeInstanceOf(TypeError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('through a signed token and a served policy', () => {
  const nfc = '\u00e9';
  const nfd = 'e\u0301';

  test("the spec's illustration: DRIVER reads but cannot write, OWNER reads and writes", async () => {
    const app = uniqueApp();
    const authz = make(app);
    const driver = await identityFor(authz, app, { sub: 'driver', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
    const owner = await identityFor(authz, app, { sub: 'owner', ars: [{ r: ['OWNER'], c: ['VIN=WVW1'] }] });
    const q = (permission: string) => ({ service: VEHICLE, permission, resource: { type: 'VIN', value: 'WVW1' } });
    expect(await authz.authorize(driver, q('READ'))).toMatchObject({ granted: true, grantedBy: { role: 'DRIVER', permission: 'READ' }, changeId: 'c1' });
    expect(await authz.authorize(driver, q('WRITE'))).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', roles: ['DRIVER'], changeId: 'c1' });
    expect(await authz.authorize(owner, q('READ'))).toMatchObject({ granted: true, grantedBy: { role: 'OWNER', permission: 'READ' } });
    expect(await authz.authorize(owner, q('WRITE'))).toMatchObject({ granted: true, grantedBy: { role: 'OWNER', permission: 'WRITE' } });
    expect(server.requests).toHaveLength(1);
  });

  test('a resource the token does not name denies without asking the policy API', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], c: ['VIN=WVW2'] }] });
    const d = await authz.authorize(id, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
    expect(d).toEqual<Decision>({ granted: false, reference: 'VIN=WVW1', roles: [], changeId: undefined, reason: 'NO_MATCHING_REFERENCE' });
    expect(server.requests).toHaveLength(0);
  });

  test('a token without ars (missing → empty) denies', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: undefined });
    expect((await authz.authorize(id, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } })).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test.each<[string, string, { type: string; value: string }]>([
    ['NFC in the token, NFD asked', `VIN=caf${nfc}`, { type: 'VIN', value: `caf${nfd}` }],
    ['NFD in the token, NFC asked', `VIN=caf${nfd}`, { type: 'VIN', value: `caf${nfc}` }],
    ['lower-case type asked', 'VIN=WVW1', { type: 'vin', value: 'WVW1' }],
    ['trailing space in the token', 'VIN=WVW1 ', { type: 'VIN', value: 'WVW1' }],
    ['leading space in the asked value', 'VIN=WVW1', { type: 'VIN', value: ' WVW1' }],
  ])('reference: %s → NO_MATCHING_REFERENCE', async (_name, inToken, resource) => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], c: [inToken] }] });
    expect((await authz.authorize(id, { service: VEHICLE, permission: 'READ', resource })).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test('a value containing "=" matches the whole reference', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], c: ['VIN=a=b'] }, { r: ['OWNER'], c: ['VIN=a'] }] });
    expect(await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'a=b' } })).toMatchObject({ granted: true, reference: 'VIN=a=b' });
    const other = await identityFor(authz, app, { sub: 'x', ars: [{ r: ['OWNER'], c: ['VIN=a'] }] });
    expect((await authz.authorize(other, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'a=b' } })).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test('Unicode forms of role, service and permission keys in the served policy are kept exactly', async () => {
    const app = uniqueApp();
    const authz = make(app, {
      applicationId: app,
      changeId: 'u1',
      roles: [{ key: `R${nfc}`, servicePolicies: [{ serviceDefinitionKey: `s${nfc}`, permissions: [{ key: `P${nfc}` }] }] }],
    });
    const q = (service: string, permission: string) => ({ service, permission, resource: { type: 'VIN', value: '1' } });
    const nfcId = await identityFor(authz, app, { sub: 'a', ars: [{ r: [`R${nfc}`], c: ['VIN=1'] }] });
    const nfdId = await identityFor(authz, app, { sub: 'b', ars: [{ r: [`R${nfd}`], c: ['VIN=1'] }] });
    expect((await authz.authorize(nfcId, q(`s${nfc}`, `P${nfc}`))).granted).toBe(true);
    expect((await authz.authorize(nfdId, q(`s${nfc}`, `P${nfc}`))).reason).toBe('ROLE_NOT_IN_POLICY');
    expect((await authz.authorize(nfcId, q(`s${nfd}`, `P${nfc}`))).reason).toBe('NO_SERVICE_POLICY');
    expect((await authz.authorize(nfcId, q(`s${nfc}`, `P${nfd}`))).reason).toBe('PERMISSION_NOT_GRANTED');
  });

  test('node ids: { node } matches ars[].n only', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], n: ['node-7'] }, { r: ['OWNER'], c: ['node-8'] }] });
    expect(await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { node: 'node-7' } })).toMatchObject({ granted: true, reference: 'node-7', roles: ['OWNER'] });
    expect((await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { node: 'node-8' } })).reason).toBe('NO_MATCHING_REFERENCE');
  });

  test('roles of one access reference never apply to another resource', async () => {
    const app = uniqueApp();
    const authz = make(app);
    const id = await identityFor(authz, app, { ars: [{ r: ['OWNER'], c: ['VIN=2'] }, { r: ['DRIVER'], c: ['VIN=1'] }] });
    expect(await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: '1' } })).toMatchObject({ granted: false, roles: ['DRIVER'], reason: 'PERMISSION_NOT_GRANTED' });
    expect(await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: '2' } })).toMatchObject({ granted: true, roles: ['OWNER'] });
  });

  test('prototype-member names in the token never grant unless the policy lists them', async () => {
    const app = uniqueApp();
    const policy = examplePolicy('c1', app);
    const authz = make(app, { ...policy, roles: [...policy.roles, { key: 'hasOwnProperty', servicePolicies: [{ serviceDefinitionKey: 'toString', permissions: [{ key: 'constructor' }] }] }] });
    const id = await identityFor(authz, app, { ars: [{ r: ['constructor', '__proto__', 'toString', 'hasOwnProperty'], c: ['VIN=1'] }, { r: ['OWNER'], c: ['VIN=2'] }] });
    const q = (vin: string, service: string, permission: string) => ({ service, permission, resource: { type: 'VIN', value: vin } });
    expect((await authz.authorize(id, q('1', VEHICLE, 'READ'))).reason).toBe('NO_SERVICE_POLICY');
    expect((await authz.authorize(id, q('1', 'toString', '__proto__'))).reason).toBe('PERMISSION_NOT_GRANTED');
    expect(await authz.authorize(id, q('1', 'toString', 'constructor'))).toMatchObject({ granted: true, grantedBy: { role: 'hasOwnProperty', service: 'toString', permission: 'constructor' } });
    expect((await authz.authorize(id, q('2', 'constructor', 'READ'))).reason).toBe('NO_SERVICE_POLICY');
    expect((await authz.authorize(id, q('2', '__proto__', 'READ'))).reason).toBe('NO_SERVICE_POLICY');
    expect((await authz.authorize(id, q('2', VEHICLE, 'toString'))).reason).toBe('PERMISSION_NOT_GRANTED');
  });
});
