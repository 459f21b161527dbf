/**
 * `null` is never "the default": only `undefined` is. Every option of `createAuthorizer` and of its
 * nested `jwks`, `policy` and `tokenCache`, and the arguments of `ready()` and the queries, refuse
 * `null` with a `TypeError` that names it.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer, type Identity } from '../../src/index.js';
import { useIam } from '../helpers/index.js';

const BASE = 'https://iam.example.com';
const TOP = [
  'baseUrl', 'issuer', 'jwksUri', 'jwks', 'localJwks', 'audience', 'algorithms', 'tokenFormats', 'clockToleranceSec',
  'maxTokenBytes', 'tokenCache', 'dispatcher', 'now', 'policyUrl', 'policyToken', 'policy', 'mode', 'onDecision',
  'decisionSampleRate', 'verify', 'maxPoolVerifications', 'applications',
];

describe('createAuthorizer refuses null options, naming them', () => {
  test.each(TOP)('%s: null', (name) => {
    const options = { baseUrl: BASE, [name]: null } as never;
    expect(() => createAuthorizer(options)).toThrow(TypeError);
    expect(() => createAuthorizer(options)).toThrow(`"${name}"`);
  });

  test.each([
    ['jwks', ['ttlMs', 'minRefreshIntervalMs', 'timeoutMs', 'maxStaleMs', 'maxBytes']],
    ['policy', ['ttlMs', 'maxStaleMs', 'minRefreshIntervalMs', 'timeoutMs', 'maxApplications', 'maxBytes']],
    ['tokenCache', ['max', 'maxTtlMs']],
  ] as const)('%s.*: null', (group, members) => {
    for (const member of members) {
      const options = { baseUrl: BASE, [group]: { [member]: null } } as never;
      expect(() => createAuthorizer(options), `${group}.${member}`).toThrow(new RegExp(`"${group}\\.${member}"`));
    }
  });

  test('a map of issuers to URLs refuses a null entry', () => {
    const issuer = `${BASE}/authentication/v1`;
    expect(() => createAuthorizer({ issuer, jwksUri: { [issuer]: null } } as never)).toThrow(/jwksUri/);
    expect(() => createAuthorizer({ issuer, jwksUri: `${BASE}/jwks`, policyUrl: { [issuer]: null } } as never)).toThrow(/policyUrl/);
  });

  test('policy must be an object', () => {
    expect(() => createAuthorizer({ baseUrl: BASE, policy: 5 } as never)).toThrow(/"policy" must be an object/);
    expect(() => createAuthorizer({ baseUrl: BASE, jwks: 5 } as never)).toThrow(/"jwks" must be an object/);
  });
});

describe('ready() and the queries refuse null', () => {
  const iam = useIam();
  let authorizer: Authorizer;
  let identity: Identity;
  beforeAll(async () => {
    authorizer = iam.authorizer();
    identity = await authorizer.authenticate(iam.bearer());
  });

  test('ready(null), ready({ applications: null })', async () => {
    await expect(authorizer.ready(null as never)).rejects.toThrow(TypeError);
    await expect(authorizer.ready({ applications: null } as never)).rejects.toThrow(/"applications"/);
  });

  test('authorize { mode: null }, accessible { node: null, explain: null }', async () => {
    const resource = { type: 'VIN', value: 'WVW1' };
    await expect(authorizer.authorize(identity, { service: 'vehicle-service', permission: 'READ', resource, mode: null } as never)).rejects.toThrow(/"mode"/);
    await expect(authorizer.authorizeMany(identity, [{ service: 'vehicle-service', permission: 'READ', resource, mode: null } as never])).rejects.toThrow(/"mode"/);
    await expect(authorizer.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'VIN', node: null } as never)).rejects.toThrow(/"node"/);
    await expect(authorizer.accessible(identity, { service: 'vehicle-service', permission: 'READ', type: 'VIN', explain: null } as never)).rejects.toThrow(/"explain"/);
  });
});
