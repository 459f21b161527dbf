/**
 * The policy cache against a real loopback policy API, with an injected clock: fresh for ttlMs,
 * then served stale while one background revalidation (`If-None-Match: "<changeId>"`) runs; 304
 * or an unchanged changeId keep the compiled policy, a new changeId swaps it in; concurrent
 * misses make one request; an LRU over applications.
 */
import { describe, expect, test } from 'vitest';
import type { Authorizer, Identity, PolicyOptions } from '../../src/index.js';
import { appOfRequest, driverCanWrite, examplePolicy, servePolicy, uniqueApp, type PolicyServer } from '../helpers/policy-server.js';
import { expectAuthzError, Gate, identityFor, READ, usePolicyApi, WRITE } from './harness.js';
import { json } from '../helpers/loopback.js';

const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 3_000 } satisfies PolicyOptions;
/** RFC 5861 stale-if-error: stale is served for maxStaleMs after freshness ends. */
const STALE_END = P.ttlMs + P.maxStaleMs;

const ctx = usePolicyApi();

async function warm(options: PolicyOptions = P): Promise<{ authz: Authorizer; id: Identity; t0: number }> {
  const authz = ctx.authorizer(options);
  const id = await identityFor(authz, ctx.app);
  const t0 = ctx.clock.now();
  expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
  expect(ctx.server.requests).toHaveLength(1);
  return { authz, id, t0 };
}

describe('fresh', () => {
  test('the first request fetches; within ttlMs no further request is made', async () => {
    const { authz, id } = await warm();
    expect(ctx.events.types()).toEqual(['fetched']);
    expect(ctx.events.events[0]!.message).toEqual({ applicationId: ctx.app, changeId: 'c1' });
    for (const advance of [0, 1, P.ttlMs - 2]) {
      ctx.clock.advance(advance);
      expect((await authz.authorize(id, READ)).granted).toBe(true);
    }
    // ttlMs - 1 after the fetch: still fresh.
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.events.types()).toEqual(['fetched']);
  });

  test('exactly ttlMs after the fetch the policy is stale: one background revalidation', async () => {
    const { authz, id } = await warm();
    ctx.clock.advance(P.ttlMs);
    expect((await authz.authorize(id, READ)).granted).toBe(true);
    await ctx.events.until('revalidated');
    expect(ctx.server.requests).toHaveLength(2);
  });
});

describe('stale while revalidate', () => {
  test('a stale policy is served at once while one revalidation with If-None-Match: "c1" is held by the API', async () => {
    const { authz, id } = await warm();
    const gate = new Gate();
    ctx.server.fault = gate.fault(ctx.server);
    ctx.clock.advance(P.ttlMs + 1);

    const decisions = await Promise.all(Array.from({ length: 5 }, () => authz.authorize(id, READ)));
    // All five answered while the revalidation had not been answered yet.
    for (const d of decisions) expect(d).toMatchObject({ granted: true, changeId: 'c1' });
    await gate.until(1);
    expect(gate.held).toBe(1);
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    expect(ctx.events.types()).toEqual(['fetched', 'stale-served', 'stale-served', 'stale-served', 'stale-served', 'stale-served']);
    expect(ctx.events.events[1]!.message).toMatchObject({ applicationId: ctx.app, changeId: 'c1', ageMs: P.ttlMs + 1, lastError: undefined });

    // More requests while it is in flight: still served, no second request.
    expect((await authz.authorize(id, READ)).granted).toBe(true);
    expect(ctx.server.requests).toHaveLength(2);

    gate.releaseAll();
    const [revalidated] = await ctx.events.until('revalidated');
    expect(revalidated!.message).toEqual({ applicationId: ctx.app, changeId: 'c1', notModified: true });
    expect(ctx.events.types()).not.toContain('changed');
  });

  test('a 304 makes the kept policy fresh again for ttlMs from the revalidation', async () => {
    const { authz, id } = await warm();
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('revalidated');
    const t1 = ctx.clock.now();
    expect(ctx.server.requests).toHaveLength(2);

    ctx.clock.advance(P.ttlMs - 1);
    await authz.authorize(id, READ);
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types().filter((t) => t === 'stale-served')).toHaveLength(1);

    ctx.clock.advance(1);
    expect(ctx.clock.now() - t1).toBe(P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('revalidated', 2);
    expect(ctx.server.requests).toHaveLength(3);
    expect(ctx.server.requests[2]!.headers['if-none-match']).toBe('"c1"');
  });

  test('304 keeps the policy: content the API changed without a new changeId is not seen', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c1', ctx.app); // same changeId: the server answers 304
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [e] = await ctx.events.until('revalidated');
    expect(e!.message.notModified).toBe(true);
    // The refetch budget was spent by the revalidation: the denial does not refetch.
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a 200 with an unchanged changeId keeps the compiled policy (no "changed", nothing recompiled)', async () => {
    const { authz, id } = await warm();
    // The API ignores If-None-Match and answers 200 with the same changeId but different content.
    ctx.server.fault = (req, res) => { json(res, 200, driverCanWrite('c1', ctx.app)); return true; };
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [e] = await ctx.events.until('revalidated');
    expect(e!.message).toEqual({ applicationId: ctx.app, changeId: 'c1', notModified: false });
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    expect(ctx.events.types()).not.toContain('changed');
    // Had it been recompiled, DRIVER could now write.
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    // That denial did refetch (budget available) and again kept the compiled policy.
    await ctx.events.until('revalidated', 2);
    expect(ctx.server.requests).toHaveLength(3);
    expect(ctx.events.types()).not.toContain('changed');
    // And the revalidation made it fresh: no request within ttlMs.
    ctx.clock.advance(P.ttlMs - 1);
    await authz.authorize(id, READ);
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a new changeId swaps the new policy in; the stale answer was given with the old one', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.ttlMs);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    const [changed] = await ctx.events.until('changed');
    expect(changed!.message).toEqual({ applicationId: ctx.app, previousChangeId: 'c1', changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');

    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2', grantedBy: { role: 'DRIVER', permission: 'WRITE' } });
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
    // The next revalidation asks with the new changeId.
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('revalidated');
    expect(ctx.server.requests[2]!.headers['if-none-match']).toBe('"c2"');
  });

  test.each([
    ['a non-Latin-1 character', 'v\u20ac1'],
    ['a line feed', 'c\n1'],
    ['a double quote', 'c"1'],
    ['a space', 'c 1'],
  ])('a changeId with %s that cannot be an ETag is revalidated without If-None-Match (never a failure)', async (_name, changeId) => {
    ctx.server.policy = { ...examplePolicy('x', ctx.app), changeId };
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    const t0 = ctx.clock.now();
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId });
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [e] = await ctx.events.until('revalidated');
    expect(e!.message).toEqual({ applicationId: ctx.app, changeId, notModified: false });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBeUndefined();
    expect(ctx.events.types()).not.toContain('failed');
    // Revalidated: still usable past maxStaleMs after the first fetch.
    ctx.clock.set(t0 + STALE_END + 1);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId });
  });

  test('a 304 to a revalidation sent without If-None-Match is a failure: the policy is never served past maxStaleMs', async () => {
    ctx.server.policy = { ...examplePolicy('x', ctx.app), changeId: 'c 1' };
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    const t0 = ctx.clock.now();
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c 1' });
    // A broken API: 304 to everything, though nothing was asked about.
    ctx.server.fault = (_req, res) => {
      res.writeHead(304).end();
      return true;
    };
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message).toMatchObject({ reason: 'status' });
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBeUndefined();
    expect(ctx.events.types()).not.toContain('revalidated');
    // Retried while served; every 304 fails alike, so the policy ends at ttlMs + maxStaleMs.
    for (let at = P.ttlMs + P.minRefreshIntervalMs; at < STALE_END; at += P.minRefreshIntervalMs * 7) {
      ctx.clock.set(t0 + at);
      await authz.authorize(id, READ).catch(() => undefined);
    }
    ctx.clock.set(t0 + STALE_END + 1);
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.events.types()).not.toContain('revalidated');
  });

  test('a changeId that is a valid ETag is sent verbatim in quotes', async () => {
    ctx.server.policy = { ...examplePolicy('x', ctx.app), changeId: 'W/2024-01-01T00:00:00Z#7' };
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    await authz.authorize(id, READ);
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [e] = await ctx.events.until('revalidated');
    expect(e!.message.notModified).toBe(true);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"W/2024-01-01T00:00:00Z#7"');
  });

  test('a revoked permission stops granting once the revalidation swapped the policy in', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = { ...examplePolicy('c2', ctx.app), roles: [{ key: 'DRIVER' }] };
    // Fresh: the cached grant stands (documented: grants do not refetch).
    ctx.clock.advance(P.ttlMs - 1);
    expect((await authz.authorize(id, READ)).granted).toBe(true);
    expect(ctx.server.requests).toHaveLength(1);
    // Stale: served once more while the revalidation runs, then denied.
    ctx.clock.advance(1);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    await ctx.events.until('changed');
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: false, changeId: 'c2', reason: 'NO_SERVICE_POLICY' });
  });
});

describe('cold cache', () => {
  test('100 concurrent authorize calls make exactly one policy request', async () => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    const gate = new Gate();
    ctx.server.fault = gate.fault(ctx.server);
    const pending = Promise.all(Array.from({ length: 100 }, (_, i) => authz.authorize(id, i % 2 === 0 ? READ : WRITE)));
    await gate.until(1);
    expect(ctx.server.requests).toHaveLength(1);
    gate.releaseAll();
    const decisions = await pending;
    expect(decisions.filter((d) => d.granted)).toHaveLength(50);
    expect(decisions.filter((d) => d.reason === 'PERMISSION_NOT_GRANTED')).toHaveLength(50);
    // The 50 denials did not refetch either: the policy was fetched an instant ago.
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.events.types().filter((t) => t === 'fetched')).toHaveLength(1);
  });

  test('100 concurrent calls over a failing API make one request and all get 503', async () => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (_req, res) => { json(res, 500, { error: 'down' }); return true; };
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => authz.authorize(id, READ)));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_POLICY_UNAVAILABLE', status: 503 });
    }
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a cold miss does not send If-None-Match', async () => {
    await warm();
    expect(ctx.server.requests[0]!.headers['if-none-match']).toBeUndefined();
  });

  test('a policy too old to use (past maxStaleMs, no failure) is fetched before answering', async () => {
    const { authz, id } = await warm();
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(STALE_END + 1);
    // Not served stale: the answer waits for the fetch and uses the new policy.
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types()).not.toContain('stale-served');
  });
});

describe('applications', () => {
  const perApp = (req: Parameters<NonNullable<PolicyServer['fault']>>[0], res: Parameters<NonNullable<PolicyServer['fault']>>[1]): boolean => {
    servePolicy(req, res, examplePolicy('c1', appOfRequest(req)));
    return true;
  };

  test('each application has its own policy', async () => {
    ctx.server.fault = perApp;
    const authz = ctx.authorizer(P);
    const other = uniqueApp();
    const a = await identityFor(authz, ctx.app);
    const b = await identityFor(authz, other);
    await authz.authorize(a, READ);
    await authz.authorize(b, READ);
    await authz.authorize(a, READ);
    await authz.authorize(b, READ);
    expect(ctx.server.requests.map(appOfRequest)).toEqual([ctx.app, other]);
  });

  test('the cache is an LRU over applications: with maxApplications 2, the least recently used is dropped', async () => {
    ctx.server.fault = perApp;
    const authz = ctx.authorizer({ ...P, maxApplications: 2 });
    const [a, b, c] = [ctx.app, uniqueApp(), uniqueApp()];
    const ids = { [a]: await identityFor(authz, a), [b]: await identityFor(authz, b), [c]: await identityFor(authz, c) };
    const ask = async (x: string): Promise<void> => { expect((await authz.authorize(ids[x]!, READ)).granted).toBe(true); };
    await ask(a);
    await ask(b);
    await ask(c); // evicts a
    expect(ctx.server.requests.map(appOfRequest)).toEqual([a, b, c]);
    await ask(c);
    await ask(b);
    expect(ctx.server.requests).toHaveLength(3);
    await ask(a); // a was dropped: refetched cold (no If-None-Match); evicts c, the least recently used
    expect(ctx.server.requests.map(appOfRequest)).toEqual([a, b, c, a]);
    expect(ctx.server.requests[3]!.headers['if-none-match']).toBeUndefined();
    await ask(b);
    expect(ctx.server.requests).toHaveLength(4);
    await ask(c);
    expect(ctx.server.requests.map(appOfRequest)).toEqual([a, b, c, a, c]);
  });

  test('no usable policy never grants: a cold failure is a 503, not a denial', async () => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (req) => { req.socket.destroy(); return true; };
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(error.message).toContain(ctx.app);
    expect(ctx.events.types()).toEqual(['failed']);
  });
});
