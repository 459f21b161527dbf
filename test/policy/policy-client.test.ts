/**
 * PolicyClient directly (white box), where `authorize()` cannot show it: the compiled policy object
 * is kept across a 304 or an unchanged changeId (compiled only when the changeId changes), and is
 * replaced, not mutated, when it changes.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PolicyClient, type PolicyClientConfig } from '../../src/policy/policy-client.js';
import { json } from '../helpers/loopback.js';
import { driverCanWrite } from '../helpers/policy-server.js';
import { usePolicyApi } from './harness.js';

const ctx = usePolicyApi({ events: false });
let dispatcher: Agent;

beforeAll(() => { dispatcher = new Agent(); });
afterAll(() => dispatcher.close());

function client(overrides: Partial<PolicyClientConfig> = {}): PolicyClient {
  return new PolicyClient({
    url: `${ctx.server.url}/policy/v1/roles`,
    dispatcher,
    policyToken: undefined,
    ttlMs: 10_000,
    maxStaleMs: 60_000,
    minRefreshIntervalMs: 1_000,
    timeoutMs: 3_000,
    maxApplications: 10,
    maxBytes: 1 << 20,
    now: ctx.clock.now,
    ...overrides,
  });
}

describe('compiled policy identity', () => {
  test('a 304 keeps the very same compiled policy object', async () => {
    const c = client();
    const first = await c.get(ctx.app, 'tok');
    ctx.clock.advance(1_000);
    const again = await c.refreshAfterDenial(ctx.app, 'tok', first);
    expect(again).toBeUndefined(); // nothing new to decide with
    const second = await c.get(ctx.app, 'tok');
    expect(second.policy).toBe(first.policy);
    expect(second.fetchedAt).toBe(ctx.clock.now());
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
  });

  test('a 200 with the same changeId keeps the very same compiled policy object, whatever its content', async () => {
    const c = client();
    const first = await c.get(ctx.app, 'tok');
    ctx.server.fault = (_req, res) => { json(res, 200, driverCanWrite('c1', ctx.app)); return true; };
    ctx.clock.advance(1_000);
    expect(await c.refreshAfterDenial(ctx.app, 'tok', first)).toBeUndefined();
    const second = await c.get(ctx.app, 'tok');
    expect(second.policy).toBe(first.policy);
    expect(second.policy.roles.get('DRIVER')?.get('vehicle-service')?.has('WRITE')).toBe(false);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a new changeId replaces the compiled policy (the old object is left untouched)', async () => {
    const c = client();
    const first = await c.get(ctx.app, 'tok');
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(1_000);
    const fresher = await c.refreshAfterDenial(ctx.app, 'tok', first);
    expect(fresher).toBeDefined();
    expect(fresher!.policy).not.toBe(first.policy);
    expect(fresher!.policy.changeId).toBe('c2');
    expect(fresher!.policy.roles.get('DRIVER')?.get('vehicle-service')?.has('WRITE')).toBe(true);
    expect(first.policy.changeId).toBe('c1');
    expect(first.policy.roles.get('DRIVER')?.get('vehicle-service')?.has('WRITE')).toBe(false);
  });

  test('close() forgets every application and makes no further request (503)', async () => {
    const c = client();
    await c.get(ctx.app, 'tok');
    c.close();
    await expect(c.get(ctx.app, 'tok')).rejects.toMatchObject({ code: 'ERR_POLICY_UNAVAILABLE', status: 503 });
    expect(ctx.server.requests).toHaveLength(1);
  });
});
