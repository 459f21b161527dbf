/**
 * Faults of the policy API against a real loopback server: 500, connection reset, hang past
 * timeoutMs, garbage JSON, malformed §2.3 shape, wrong applicationId, oversize body, redirect to
 * another loopback host. Warm cache: the cached policy is served until maxStaleMs past its last
 * successful fetch, then 503. Cold cache: 503. No path grants without a policy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Authorizer, PolicyOptions } from '../../src/index.js';
import { json, startLoopback, type Loopback } from '../helpers/loopback.js';
import { Clock } from '../helpers/clock.js';
import { driverCanWrite, examplePolicy } from '../helpers/policy-server.js';
import { expectAuthzError, identityFor, READ, upstreamReason, usePolicyApi, WRITE } from './harness.js';

const MAX_BYTES = 4_096;
/** For the faults that hang; every other test has a generous timeout, so that load never turns a fault into a timeout. */
const TIMEOUT_MS = 250;
const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 5_000, maxBytes: MAX_BYTES } satisfies PolicyOptions;
/** RFC 5861 stale-if-error: stale is served for maxStaleMs after freshness ends. */
const STALE_END = P.ttlMs + P.maxStaleMs;

let elsewhere: Loopback;
// Registered before usePolicyApi's hooks, so that it runs after them: once the authorizers are closed.
afterEach(() => {
  // No request may ever reach the other host, whatever the test.
  expect(elsewhere.requests).toHaveLength(0);
});
const ctx = usePolicyApi();

beforeAll(async () => {
  elsewhere = await startLoopback((_req, res) => { json(res, 200, examplePolicy('evil', ctx.app)); });
  // Warm up undici's code paths in this worker, so that the short timeouts below measure the server only.
  const app = 'warm-up';
  ctx.server.policy = examplePolicy('c1', app);
  const authz = ctx.authorizers.forServer(ctx.server, new Clock(), P);
  await authz.authorize(await identityFor(authz, app), READ);
  await ctx.authorizers.closeAll();
});
afterAll(() => elsewhere.close());
beforeEach(() => { elsewhere.requests.length = 0; });

/** A policy whose JSON is larger than MAX_BYTES. */
function bigPolicy(changeId: string): object {
  const roles = Array.from({ length: 100 }, (_, i) => ({ key: `ROLE-${i}`, servicePolicies: [{ serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }] }] }));
  const policy = { ...driverCanWrite(changeId, ctx.app), roles: [...driverCanWrite(changeId, ctx.app).roles, ...roles] };
  expect(JSON.stringify(policy).length).toBeGreaterThan(MAX_BYTES);
  return policy;
}

type Fault = (req: IncomingMessage, res: ServerResponse) => void;

/** A reset before any response byte is retried once on a fresh connection: two requests per attempt. */
const ATTEMPT_REQUESTS: Record<string, number> = { 'connection reset': 2 };

/** Every fault answers with, or would lead to, a policy in which DRIVER may WRITE: a grant would show it was used. */
const FAULTS: [name: string, reason: string, fault: Fault][] = [
  ['HTTP 500', 'status', (_req, res) => { json(res, 500, driverCanWrite('c2', ctx.app)); }],
  ['HTTP 503', 'status', (_req, res) => { json(res, 503, { error: 'unavailable' }); }],
  // A 401/403 to the caller's token is that caller's outcome (refusal.test.ts), not an outage.
  ['HTTP 404', 'status', (_req, res) => { json(res, 404, driverCanWrite('c2', ctx.app)); }],
  ['connection reset', 'network', (req) => { req.socket.destroy(); }],
  ['hang past timeoutMs', 'timeout', () => { /* never answers */ }],
  ['headers then a body that never ends', 'timeout', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"applicationId":'); }],
  ['garbage JSON', 'malformed', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"applicationId": "app-1", "changeId": "c2", roles: [}'); }],
  ['an empty 200 body', 'malformed', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(); }],
  ['a JSON array', 'malformed', (_req, res) => { json(res, 200, [driverCanWrite('c2', ctx.app)]); }],
  ['JSON null', 'malformed', (_req, res) => { json(res, 200, null); }],
  ['roles not an array', 'malformed', (_req, res) => { json(res, 200, { applicationId: ctx.app, changeId: 'c2', roles: { DRIVER: ['WRITE'] } }); }],
  ['a permission without key', 'malformed', (_req, res) => {
    json(res, 200, { applicationId: ctx.app, changeId: 'c2', roles: [{ key: 'DRIVER', servicePolicies: [{ serviceDefinitionKey: 'vehicle-service', permissions: ['WRITE'] }] }] });
  }],
  ['changeId missing', 'malformed', (_req, res) => { const { changeId: _c, ...rest } = driverCanWrite('c2', ctx.app); json(res, 200, rest); }],
  ['a wrong applicationId', 'malformed', (_req, res) => { json(res, 200, driverCanWrite('c2', `${ctx.app}-other`)); }],
  ['applicationId missing', 'malformed', (_req, res) => { const { applicationId: _a, ...rest } = driverCanWrite('c2', ctx.app); json(res, 200, rest); }],
  ['an oversize body with Content-Length', 'oversize', (_req, res) => { json(res, 200, bigPolicy('c2')); }],
  ['an oversize chunked body', 'oversize', (_req, res) => {
    const text = JSON.stringify(bigPolicy('c2'));
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let i = 0; i < text.length; i += 512) res.write(text.slice(i, i + 512));
    res.end();
  }],
  ['a 302 redirect to another loopback host', 'redirect', (_req, res) => { res.writeHead(302, { location: `${elsewhere.url}/policy/v1/roles` }); res.end(); }],
  ['a 307 redirect to another loopback host', 'redirect', (_req, res) => { res.writeHead(307, { location: `${elsewhere.url}/policy/v1/roles` }); res.end(); }],
];

function useFault(fault: Fault): void {
  ctx.server.fault = (req, res) => { fault(req, res); return true; };
}

function make(reason?: string): Authorizer {
  return ctx.authorizer(reason === 'timeout' ? { ...P, timeoutMs: TIMEOUT_MS } : P);
}

describe.each(FAULTS)('%s', (name, reason, fault) => {
  const per = ATTEMPT_REQUESTS[name] ?? 1;
  test('cold cache: 503 ERR_POLICY_UNAVAILABLE; retries are spaced by minRefreshIntervalMs; recovers', async () => {
    const authz = make(reason);
    const id = await identityFor(authz, ctx.app);
    useFault(fault);
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe(reason);
    expect(ctx.server.requests).toHaveLength(per);
    expect(ctx.events.types()).toEqual(['failed']);
    expect(ctx.events.events[0]!.message).toMatchObject({ applicationId: ctx.app, reason });
    // Nothing was cached: a check() also fails with 503, never with a grant or a 403.
    await expectAuthzError(authz.authorize(id, WRITE), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(per);

    ctx.server.fault = undefined;
    ctx.clock.advance(P.minRefreshIntervalMs - 1);
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(per);
    ctx.clock.advance(1);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(per + 1);
    expect(ctx.server.requests[per]!.headers['if-none-match']).toBeUndefined();
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
  });

  test('warm cache: the cached policy is served until maxStaleMs after the last success, then 503', async () => {
    const authz = make(reason);
    const id = await identityFor(authz, ctx.app);
    const t0 = ctx.clock.now();
    await authz.authorize(id, READ);
    useFault(fault);

    ctx.clock.advance(P.ttlMs);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message).toMatchObject({ applicationId: ctx.app, reason });
    expect(ctx.server.requests).toHaveLength(1 + per);
    // The failed revalidation did not swap anything in: DRIVER still cannot write.
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(1 + per);

    // The last usable millisecond: served, and another (failing) attempt is made.
    ctx.clock.set(t0 + STALE_END);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    await ctx.events.until('failed', 2);
    expect(ctx.server.requests).toHaveLength(1 + 2 * per);
    const stale = ctx.events.events.filter((e) => e.type === 'stale-served');
    expect(stale.at(-1)!.message).toMatchObject({ ageMs: STALE_END, lastError: { reason } });

    // One millisecond later: 503, and no request (the last attempt was 1 ms ago).
    ctx.clock.set(t0 + STALE_END + 1);
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe(reason);
    expect(ctx.server.requests).toHaveLength(1 + 2 * per);
    await expectAuthzError(authz.authorize(id, WRITE), 'ERR_POLICY_UNAVAILABLE', 503);

    // The copy is gone: the first retry comes within minRefreshIntervalMs of the failure (the cold
    // backoff's first step; jitter drawn at its edge here, so exactly then), never sooner.
    ctx.clock.set(t0 + STALE_END + P.minRefreshIntervalMs - 1);
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1 + 2 * per);
    // Then another attempt; still failing: 503.
    ctx.clock.advance(1);
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1 + 3 * per);
    expect(ctx.events.types().filter((t) => t === 'failed')).toHaveLength(3);
    expect(ctx.events.types()).not.toContain('changed');

    // The API is back: the next attempt (after a backoff of four times the spacing) revalidates (304) and serves again.
    ctx.server.fault = undefined;
    ctx.clock.advance(4 * P.minRefreshIntervalMs);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(2 + 3 * per);
  });
});

describe('specific faults', () => {
  test('a response for another application is rejected and never cached, not even under that application', async () => {
    const authz = make();
    const id = await identityFor(authz, ctx.app);
    const other = `${ctx.app}-other`;
    const otherId = await identityFor(authz, other);
    ctx.server.policy = driverCanWrite('c9', other);
    await expectAuthzError(authz.authorize(id, WRITE), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);
    // The other application's own request is made: the rejected document was not kept for it.
    expect(await authz.authorize(otherId, WRITE)).toMatchObject({ granted: true, changeId: 'c9' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBeUndefined();
  });

  test('with a warm cache, a revalidation answered for another application is a failure, not a swap', async () => {
    const authz = make();
    const id = await identityFor(authz, ctx.app);
    await authz.authorize(id, READ);
    ctx.server.policy = driverCanWrite('c1', `${ctx.app}-other`);
    ctx.clock.advance(P.ttlMs);
    ctx.server.fault = (_req, res) => { json(res, 200, ctx.server.policy); return true; }; // ignore If-None-Match
    await authz.authorize(id, READ);
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message.reason).toBe('malformed');
    expect(ctx.events.types()).not.toContain('revalidated');
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
  });

  test('a body of exactly maxBytes is accepted; one byte more is refused', async () => {
    const text = JSON.stringify(examplePolicy('c1', ctx.app));
    const exact = ctx.authorizer({ ...P, maxBytes: Buffer.byteLength(text) });
    const under = ctx.authorizer({ ...P, maxBytes: Buffer.byteLength(text) - 1 });
    expect((await exact.authorize(await identityFor(exact, ctx.app), READ)).granted).toBe(true);
    const error = await expectAuthzError(under.authorize(await identityFor(under, ctx.app), READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('oversize');
  });

  test('a 304 to a request without If-None-Match (cold cache) is refused', async () => {
    const authz = make();
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (_req, res) => { res.writeHead(304, { etag: '"c1"' }); res.end(); return true; };
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a revalidation answered 200 with the same changeId but a malformed body is a failure: it neither keeps the cache alive nor swaps', async () => {
    const authz = make();
    const id = await identityFor(authz, ctx.app);
    const t0 = ctx.clock.now();
    await authz.authorize(id, READ);
    ctx.server.fault = (_req, res) => { json(res, 200, { applicationId: ctx.app, changeId: 'c1', roles: 'everything' }); return true; };
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message.reason).toBe('malformed');
    expect(ctx.events.types()).not.toContain('revalidated');
    // Past maxStaleMs after the last *valid* answer: 503.
    ctx.clock.set(t0 + STALE_END + 1);
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
  });

  test('an API that is down (connection refused): cold 503; warm served until maxStaleMs', async () => {
    const gone = await startLoopback(() => undefined);
    const url = `${gone.url}/policy/v1/roles`;
    await gone.close();
    const authz = ctx.authorizer(P, { policyUrl: url });
    const id = await identityFor(authz, ctx.app);
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');

    // Warm: fetched while up, then the API goes down.
    let up = true;
    const flaky = ctx.authorizer(P);
    ctx.server.fault = (req) => { if (up) return false; req.socket.destroy(); return true; };
    const t0 = ctx.clock.now();
    await flaky.authorize(await identityFor(flaky, ctx.app), READ);
    up = false;
    ctx.clock.advance(P.ttlMs);
    expect((await flaky.authorize(await identityFor(flaky, ctx.app), READ)).granted).toBe(true);
    await ctx.events.until('failed', 2);
    ctx.clock.set(t0 + STALE_END + 1);
    await expectAuthzError(flaky.authorize(await identityFor(flaky, ctx.app), READ), 'ERR_POLICY_UNAVAILABLE', 503);
  });

  test('a hung fetch is abandoned after timeoutMs (real time), not after the test timeout', async () => {
    const authz = make('timeout');
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = () => true; // never answers
    const started = performance.now();
    await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 5_000);
  });
});
