/**
 * Operator events on `node:diagnostics_channel`: policy fetched / revalidated / changed /
 * stale-served / failed, and decision denied, with their documented message shapes; no token in
 * any message.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { channels } from '../../src/index.js';
import { json } from '../helpers/loopback.js';
import { Clock } from '../helpers/clock.js';
import { driverCanWrite, examplePolicy, startPolicyServer, uniqueApp, type PolicyServer } from '../helpers/policy-server.js';
import { Authorizers, BASE, mint, READ, recordPolicyEvents, withoutJitter, WRITE } from './harness.js';

const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 3_000 };

let server: PolicyServer;
const authorizers = new Authorizers();
withoutJitter();

beforeAll(async () => { server = await startPolicyServer(); });
afterAll(() => server.close());
afterEach(() => authorizers.closeAll());

test('channel names are the documented ones', () => {
  expect(channels).toMatchObject({
    policyFetched: 'iam-authz:policy:fetched',
    policyRevalidated: 'iam-authz:policy:revalidated',
    policyChanged: 'iam-authz:policy:changed',
    policyStale: 'iam-authz:policy:stale-served',
    policyFailed: 'iam-authz:policy:failed',
    decisionDenied: 'iam-authz:decision:denied',
  });
});

test('a whole timeline publishes fetched, stale-served, revalidated, changed, failed and denied', async () => {
  const app = uniqueApp();
  server.policy = examplePolicy('c1', app);
  server.fault = undefined;
  const clock = new Clock();
  const authz = authorizers.forServer(server, clock, P);
  const token = mint(BASE, { app, sub: 'actor-bob' });
  const id = await authz.authenticate(`Bearer ${token}`);
  const events = recordPolicyEvents(app);
  try {
    // t0: cold fetch.
    await authz.authorize(id, READ);
    // Denied (within the refetch interval: no refetch).
    await authz.authorize(id, WRITE);
    // t0 + ttl: stale served, revalidated by a 304.
    clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await events.until('revalidated');
    // New version in the console; next revalidation swaps it in.
    server.policy = driverCanWrite('c2', app);
    clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await events.until('changed');
    // The API fails; the next revalidation fails.
    server.fault = (_req, res) => { json(res, 500, {}); return true; };
    clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await events.until('failed');

    expect(events.types()).toEqual(['fetched', 'denied', 'stale-served', 'revalidated', 'stale-served', 'changed', 'stale-served', 'failed']);
    const [fetched, denied, stale1, revalidated, , changed, stale3, failed] = events.events.map((e) => e.message);
    expect(fetched).toEqual({ applicationId: app, changeId: 'c1' });
    expect(denied).toEqual({ service: 'vehicle-service', permission: 'WRITE', reference: 'VIN=WVW1', reason: 'PERMISSION_NOT_GRANTED', roles: ['DRIVER'], changeId: 'c1', sub: 'actor-bob', app });
    expect(stale1).toEqual({ applicationId: app, changeId: 'c1', ageMs: P.ttlMs, lastError: undefined });
    expect(revalidated).toEqual({ applicationId: app, changeId: 'c1', notModified: true });
    expect(changed).toEqual({ applicationId: app, previousChangeId: 'c1', changeId: 'c2' });
    expect(stale3).toMatchObject({ applicationId: app, changeId: 'c2', ageMs: P.ttlMs });
    expect(failed).toMatchObject({ applicationId: app, reason: 'status' });
    expect(failed!.error).toBeInstanceOf(Error);

    // The failure is reported on the next stale-served event (after the backoff: while a copy is
    // served, at most 1.6 × ttlMs).
    clock.advance(2 * P.ttlMs);
    await authz.authorize(id, READ);
    await events.until('failed', 2);
    const staleAfterFailure = events.events.filter((e) => e.type === 'stale-served').at(-1)!.message;
    expect(staleAfterFailure.lastError).toMatchObject({ reason: 'status' });

    // No message carries the token, not even inside an error.
    const text = JSON.stringify(events.events, (_k, v: unknown) => (v instanceof Error ? { message: v.message, stack: v.stack, cause: String(v.cause) } : v));
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]!);
  } finally {
    events.dispose();
  }
});

test('denials publish their reason, including INVALID_RESOURCE and NO_MATCHING_REFERENCE; grants publish nothing', async () => {
  const app = uniqueApp();
  server.policy = examplePolicy('c1', app);
  server.fault = undefined;
  const authz = authorizers.forServer(server, new Clock(), P);
  const id = await authz.authenticate(`Bearer ${mint(BASE, { app })}`);
  const seen: unknown[] = [];
  const onDenied = (m: unknown): void => { if ((m as { app: string }).app === app) seen.push(m); };
  subscribe(channels.decisionDenied, onDenied);
  try {
    await authz.authorize(id, READ);
    await authz.authorize(id, { ...READ, resource: { type: 'VIN', value: 'OTHER' } });
    await authz.authorize(id, { ...READ, resource: { type: '', value: 'x' } });
    await authz.authorize(id, { ...READ, service: 'other-service' });
  } finally {
    unsubscribe(channels.decisionDenied, onDenied);
  }
  expect(seen.map((m) => (m as { reason: string }).reason)).toEqual(['NO_MATCHING_REFERENCE', 'INVALID_RESOURCE', 'NO_SERVICE_POLICY']);
  expect(seen[0]).toMatchObject({ reference: 'VIN=OTHER', roles: [], changeId: undefined });
  // After unsubscribing, nothing more is recorded.
  await authz.authorize(id, WRITE);
  expect(seen).toHaveLength(3);
});
