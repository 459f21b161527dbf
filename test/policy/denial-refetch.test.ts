/**
 * A denial refetches the policy once (shared by concurrent requests) when the cached copy is older
 * than minRefreshIntervalMs, and decides again: a role granted in the console works on the next
 * request, not after ttlMs. At most one such refetch per application per interval.
 */
import { describe, expect, test } from 'vitest';
import type { Authorizer, Identity, PolicyOptions } from '../../src/index.js';
import { json } from '../helpers/loopback.js';
import { driverCanWrite, examplePolicy, uniqueApp, VEHICLE } from '../helpers/policy-server.js';
import { Gate, identityFor, READ, usePolicyApi, VIN1, WRITE } from './harness.js';

const P = { ttlMs: 60_000, maxStaleMs: 120_000, minRefreshIntervalMs: 5_000, timeoutMs: 3_000 } satisfies PolicyOptions;

const ctx = usePolicyApi();

async function warm(options: PolicyOptions = P, claims: Record<string, unknown> = {}): Promise<{ authz: Authorizer; id: Identity }> {
  const authz = ctx.authorizer(options);
  const id = await identityFor(authz, ctx.app, claims);
  expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
  expect(ctx.server.requests).toHaveLength(1);
  return { authz, id };
}

describe('refetch after a denial', () => {
  test('a permission granted in the console works on the next request once the copy is older than minRefreshIntervalMs', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    const d = await authz.authorize(id, WRITE);
    expect(d).toEqual({ granted: true, reference: 'VIN=WVW1', roles: ['DRIVER'], grantedBy: { role: 'DRIVER', service: VEHICLE, permission: 'WRITE' }, changeId: 'c2', reason: 'GRANTED' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    // Fresh policy, well before ttlMs: no 'stale-served', and no 'denied' for the request that was granted in the end.
    expect(ctx.events.types()).toEqual(['fetched', 'changed']);
  });

  test('a new role added in the console (ROLE_NOT_IN_POLICY before) works on the next request', async () => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app, { ars: [{ r: ['FLEET'], c: ['VIN=WVW1'] }] });
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'ROLE_NOT_IN_POLICY' });
    expect(ctx.server.requests).toHaveLength(1);
    const p = examplePolicy('c2', ctx.app);
    ctx.server.policy = { ...p, roles: [...p.roles, { key: 'FLEET', servicePolicies: [{ serviceDefinitionKey: VEHICLE, permissions: [{ key: 'WRITE' }] }] }] };
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2', grantedBy: { role: 'FLEET' } });
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('within minRefreshIntervalMs of the last fetch a denial does not refetch', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs - 1);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.events.types()).toEqual(['fetched', 'denied', 'denied']);
    ctx.clock.advance(1);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('at most one refetch per interval: an unchanged policy (304) is not asked for again at every denial', async () => {
    const { authz, id } = await warm();
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    expect(ctx.events.types()).toEqual(['fetched', 'revalidated', 'denied']);
    for (let i = 0; i < 20; i++) await authz.authorize(id, WRITE);
    ctx.clock.advance(P.minRefreshIntervalMs - 1);
    for (let i = 0; i < 20; i++) await authz.authorize(id, WRITE);
    expect(ctx.server.requests).toHaveLength(2);
    ctx.clock.advance(1);
    await authz.authorize(id, WRITE);
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('concurrent denials share one refetch, and all are decided again with the new policy', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    const gate = new Gate();
    ctx.server.fault = gate.fault(ctx.server);
    ctx.clock.advance(P.minRefreshIntervalMs);
    const pending = Promise.all(Array.from({ length: 50 }, () => authz.authorize(id, WRITE)));
    await gate.until(1);
    expect(ctx.server.requests).toHaveLength(2);
    gate.releaseAll();
    const decisions = await pending;
    for (const d of decisions) expect(d).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types().filter((t) => t === 'changed')).toHaveLength(1);
    expect(ctx.events.types()).not.toContain('denied');
  });

  test('denials of different applications refetch independently', async () => {
    const { authz, id } = await warm();
    const other = uniqueApp();
    const otherId = await identityFor(authz, other);
    ctx.server.policy = examplePolicy('c1', other);
    await authz.authorize(otherId, READ);
    ctx.server.policy = examplePolicy('c1', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    await authz.authorize(id, WRITE);
    ctx.server.policy = examplePolicy('c1', other);
    await authz.authorize(otherId, WRITE);
    expect(ctx.server.requests).toHaveLength(4);
  });

  test('a refetch that fails keeps the denial from the cached policy (no 503, no grant)', async () => {
    const { authz, id } = await warm();
    ctx.server.fault = (_req, res) => { json(res, 500, {}); return true; };
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types()).toEqual(['fetched', 'failed', 'denied']);
    // The cached policy still answers within ttlMs (it was confirmed at t0).
    expect((await authz.authorize(id, READ)).granted).toBe(true);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a refetch answering a policy that still denies gives the denial of the new policy', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = { ...examplePolicy('c2', ctx.app), roles: [{ key: 'DRIVER', servicePolicies: [{ serviceDefinitionKey: 'other-service', permissions: [{ key: 'WRITE' }] }] }] };
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'NO_SERVICE_POLICY', changeId: 'c2' });
    const denied = ctx.events.events.filter((e) => e.type === 'denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]!.message).toMatchObject({ reason: 'NO_SERVICE_POLICY', changeId: 'c2' });
  });

  test('a resource the token does not name never triggers a refetch', async () => {
    const { authz, id } = await warm();
    ctx.clock.advance(P.minRefreshIntervalMs);
    for (let i = 0; i < 3; i++) {
      expect((await authz.authorize(id, { service: VEHICLE, permission: 'WRITE', resource: { ...VIN1, value: 'OTHER' } })).reason).toBe('NO_MATCHING_REFERENCE');
    }
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a refetch after a denial renews freshness like any successful fetch', async () => {
    const { authz, id } = await warm();
    ctx.clock.advance(P.minRefreshIntervalMs);
    await authz.authorize(id, WRITE); // refetch (304) at t0 + minRefresh
    ctx.clock.advance(P.ttlMs - 1);
    await authz.authorize(id, READ);
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types()).not.toContain('stale-served');
  });
});
