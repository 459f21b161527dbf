/**
 * `ready({ applications })` warms the role policy too (issue #14 §5): with `policyToken`, the first
 * request of a warmed application pays no policy fetch; a policy API that refuses the service's
 * credentials makes ready() reject with a misconfiguration; without `policyToken` it is a TypeError.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { channels, createAuthorizer, PolicyUnavailableError, type Authorizer } from '../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';

let iam: DevIam;
const authorizers: Authorizer[] = [];
const create = (options: Parameters<typeof createAuthorizer>[0]) => {
  const authorizer = createAuthorizer(options);
  authorizers.push(authorizer);
  return authorizer;
};

beforeAll(async () => {
  iam = await startDevIam({
    console: false,
    config: {
      idps: [{ key: 'dev', builtin: true }],
      applications: [{ id: 'app-1', serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ'] }], roles: [{ key: 'DRIVER', permissions: { 'vehicle-service': ['READ'] } }] }],
      actors: [{ id: 'actor-alice', idp: 'dev', subject: 'alice', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] } }],
    },
  });
});
afterAll(async () => {
  for (const authorizer of authorizers) await authorizer.close();
  await iam.close();
});

function countFetches(): { count: () => number; stop: () => void } {
  let fetched = 0;
  const onFetched = () => { fetched++; };
  subscribe(channels.policyFetched, onFetched);
  return { count: () => fetched, stop: () => unsubscribe(channels.policyFetched, onFetched) };
}

describe('ready({ applications })', () => {
  test('with policyToken: the policy is fetched by ready(), and the first decision needs no fetch', async () => {
    const serviceToken = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const authorizer = create({ baseUrl: iam.baseUrl, policyToken: () => Promise.resolve(serviceToken) });
    const fetches = countFetches();
    try {
      await authorizer.ready({ applications: ['app-1'] });
      expect(fetches.count()).toBe(1);
      const identity = await authorizer.authenticate(`Bearer ${iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' })}`);
      const decision = await authorizer.authorize(identity, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
      expect(decision.granted).toBe(true);
      expect(fetches.count()).toBe(1);
    } finally {
      fetches.stop();
    }
  });

  test('an application the policy API does not know makes ready() reject with 503 misconfigured', async () => {
    const serviceToken = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const authorizer = create({ baseUrl: iam.baseUrl, policyToken: () => Promise.resolve(serviceToken) });
    const error = await authorizer.ready({ applications: ['no-such-app'] }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyUnavailableError);
    expect((error as PolicyUnavailableError).status).toBe(503);
  });

  test('refused service credentials make ready() reject, flagged as a misconfiguration', async () => {
    const expired = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(Date.now() / 1000) - 3600 } });
    const authorizer = create({ baseUrl: iam.baseUrl, policyToken: () => Promise.resolve(expired) });
    const error = await authorizer.ready({ applications: ['app-1'] }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyUnavailableError);
    expect((error as PolicyUnavailableError).misconfigured).toBe(true);
  });

  test('without policyToken, or with a bad list, it is a TypeError naming the option', async () => {
    const authorizer = create({ baseUrl: iam.baseUrl });
    await expect(authorizer.ready({ applications: ['app-1'] })).rejects.toThrow(/policyToken/);
    await expect(authorizer.ready({ applications: [''] })).rejects.toThrow(TypeError);
    await expect(authorizer.ready({ applications: 'app-1' as unknown as string[] })).rejects.toThrow(/applications/);
    await expect(authorizer.ready()).resolves.toBeDefined();
  });
});
