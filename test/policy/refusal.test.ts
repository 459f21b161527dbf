/**
 * Issue 9 §1: a 401/403 of the policy API to one caller's token is that caller's outcome only. The
 * application's cached policy, freshness, failure state and refetch budget are untouched; others
 * get their normal decision at once (also those that waited on the refused fetch); a refused token
 * is remembered briefly (no request per retry); a policy API refusing every token is a 503
 * misconfiguration, never 401 for everyone; with `policyToken`, a 401/403 is the service's problem.
 */
import type { IncomingMessage } from 'node:http';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, test } from 'vitest';
import { channels, PolicyUnavailableError, type PolicyOptions } from '../../src/index.js';
import { toErrorResponse } from '../../src/adapter/index.js';
import { REFUSAL_MEMORY_MS } from '../../src/policy/policy-client.js';
import { json } from '../helpers/loopback.js';
import { expectAuthzError, identityFor, READ, usePolicyApi, WRITE } from './harness.js';

const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 5_000 } satisfies PolicyOptions;
/** RFC 5861 stale-if-error: stale is served for maxStaleMs after freshness ends. */
const STALE_END = P.ttlMs + P.maxStaleMs;
const ctx = usePolicyApi();

function subOfRequest(req: IncomingMessage): string {
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  const payload = token.split('.')[1] ?? '';
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub: string }).sub;
}

/** The policy API refuses bob's token with `status` (or every token when `everyone`); serves the others. */
function refuse(status: 401 | 403, everyone = false): void {
  ctx.server.fault = (req, res) => {
    if (!everyone && subOfRequest(req) !== 'actor-bob') return false;
    json(res, status, { title: status === 401 ? 'Unauthorized' : 'Forbidden' });
    return true;
  };
}

async function users(authz: ReturnType<typeof ctx.authorizer>) {
  const alice = await identityFor(authz, ctx.app);
  const bob = await identityFor(authz, ctx.app, { sub: 'actor-bob', jti: 'jti-bob' });
  const carol = await identityFor(authz, ctx.app, { sub: 'actor-carol', jti: 'jti-carol' });
  return { alice, bob, carol };
}

describe('a refused caller token is that caller\'s outcome only', () => {
  test('expired cache: bob\'s 401 is a 401 ERR_TOKEN_REJECTED for bob; alice gets her decision at once, with a new request', async () => {
    const authz = ctx.authorizer(P);
    const { alice, bob } = await users(authz);
    expect(await authz.authorize(alice, READ)).toMatchObject({ granted: true });
    refuse(401);
    ctx.clock.advance(STALE_END + 1); // past maxStaleMs: a fetch is needed to answer
    const error = await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 401);
    expect(error.message).toMatch(/IAM rejected the token/);
    const response = toErrorResponse(error, { realm: 'api', exposeDecision: false, retryAfterSec: 5 });
    expect(response).toMatchObject({ status: 401, body: { code: 'ERR_TOKEN_REJECTED' } });
    expect(response.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(ctx.server.requests).toHaveLength(2);
    // No failure state, no spacing: alice's request goes out now and she is answered.
    expect(await authz.authorize(alice, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(3);
    expect(ctx.events.types()).not.toContain('failed');
  });

  test('a 403 to bob\'s token is a 403 ERR_TOKEN_REJECTED for bob only', async () => {
    const authz = ctx.authorizer(P);
    const { alice, bob } = await users(authz);
    await authz.authorize(alice, READ);
    refuse(403);
    ctx.clock.advance(STALE_END + 1);
    await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 403);
    expect(await authz.authorize(alice, READ)).toMatchObject({ granted: true });
  });

  test('a background revalidation made with a refused token leaves the cached policy and its freshness alone; the next caller revalidates', async () => {
    const refused: unknown[] = [];
    const onRefused = (m: unknown): void => { refused.push(m); };
    subscribe(channels.policyTokenRefused, onRefused);
    try {
      const authz = ctx.authorizer(P);
      const { alice, bob } = await users(authz);
      await authz.authorize(alice, READ);
      refuse(401);
      ctx.clock.advance(P.ttlMs); // stale: served, revalidated in the background with bob's token
      expect(await authz.authorize(bob, READ)).toMatchObject({ granted: true, changeId: 'c1' });
      await expect.poll(() => refused.length).toBe(1);
      expect(refused[0]).toEqual({ applicationId: ctx.app, statusCode: 401, acceptedRecently: true });
      expect(ctx.server.requests).toHaveLength(2);
      // Alice (well within minRefreshIntervalMs of bob's attempt) revalidates with her own token now.
      await authz.authorize(alice, READ);
      await ctx.events.until('revalidated');
      expect(ctx.server.requests).toHaveLength(3);
      expect(ctx.events.types()).not.toContain('failed');
      // Bob, remembered as refused, is not granted from the now fresh cache, and costs no request.
      await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 401);
      expect(ctx.server.requests).toHaveLength(3);
    } finally {
      unsubscribe(channels.policyTokenRefused, onRefused);
    }
  });

  test('callers waiting on the refused fetch each retry once with their own token', async () => {
    const authz = ctx.authorizer(P);
    const { alice, bob, carol } = await users(authz);
    await authz.authorize(alice, READ);
    ctx.clock.advance(STALE_END + 1);
    let release: (() => void) | undefined;
    ctx.server.fault = (req, res) => {
      if (subOfRequest(req) !== 'actor-bob') return false;
      release = () => { json(res, 401, {}); };
      return true;
    };
    const bobs = authz.authorize(bob, READ);
    bobs.catch(() => undefined); // asserted below; rejects while the others are awaited
    await expect.poll(() => release).toBeDefined();
    const others = [authz.authorize(alice, READ), authz.authorize(carol, WRITE)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ctx.server.requests).toHaveLength(2); // they wait on bob's fetch
    release?.();
    const [a, c] = await Promise.all(others);
    expect(a).toMatchObject({ granted: true, changeId: 'c1' });
    expect(c).toMatchObject({ granted: false, changeId: 'c1' }); // a DRIVER may not WRITE: a normal denial
    await expectAuthzError(bobs, 'ERR_TOKEN_REJECTED', 401);
    // One retry, shared by alice and carol (one fetch in flight per application).
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a flood of one refused token makes one request per REFUSAL_MEMORY_MS; one fetch in flight at most', async () => {
    const authz = ctx.authorizer(P);
    const { alice, bob } = await users(authz);
    await authz.authorize(alice, READ);
    refuse(401);
    ctx.clock.advance(STALE_END + 1);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => authz.authorize(bob, READ)));
    expect(results.every((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'ERR_TOKEN_REJECTED')).toBe(true);
    for (let i = 0; i < 50; i += 1) await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 401);
    expect(ctx.server.requests).toHaveLength(2);
    ctx.clock.advance(REFUSAL_MEMORY_MS - 1);
    await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 401);
    expect(ctx.server.requests).toHaveLength(2);
    ctx.clock.advance(1);
    await expectAuthzError(authz.authorize(bob, READ), 'ERR_TOKEN_REJECTED', 401);
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a flood of distinct refused tokens: one request in flight at a time, each token asked at most once', async () => {
    const authz = ctx.authorizer(P);
    const { alice } = await users(authz);
    await authz.authorize(alice, READ);
    ctx.clock.advance(STALE_END + 1);
    let inFlight = 0;
    let maxInFlight = 0;
    ctx.server.fault = (req, res) => {
      if (!subOfRequest(req).startsWith('actor-bob')) return false;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => { inFlight -= 1; json(res, 401, {}); }, 5);
      return true;
    };
    const bobs = await Promise.all(Array.from({ length: 10 }, (_, i) => identityFor(authz, ctx.app, { sub: `actor-bob-${i}`, jti: `jti-bob-${i}` })));
    const results = await Promise.allSettled(bobs.flatMap((bob) => Array.from({ length: 5 }, () => authz.authorize(bob, READ))));
    // Never a grant. A caller that waited through MAX_ROUNDS fetches refused for others' tokens,
    // without its own being asked, gets 503 (bounded waiting); the others get their 401.
    const codes = new Set(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'granted')));
    expect([...codes].every((c) => c === 'ERR_TOKEN_REJECTED' || c === 'ERR_POLICY_UNAVAILABLE')).toBe(true);
    expect(codes.has('ERR_TOKEN_REJECTED')).toBe(true);
    expect(maxInFlight).toBe(1);
    expect(ctx.server.requests.length - 1).toBeLessThanOrEqual(bobs.length);
    // The application was not harmed: alice is served at once.
    expect(await authz.authorize(alice, READ)).toMatchObject({ granted: true });
  });
});

describe('a policy API that refuses every token', () => {
  test.each([401, 403] as const)('HTTP %i to every token on a cold cache: 503 misconfiguration for each caller, never 401/403', async (status) => {
    const authz = ctx.authorizer(P);
    const { alice, bob } = await users(authz);
    refuse(status, true);
    for (const who of [alice, bob]) {
      const error = await expectAuthzError(authz.authorize(who, READ), 'ERR_POLICY_UNAVAILABLE', 503);
      expect(error).toBeInstanceOf(PolicyUnavailableError);
      expect(error).toMatchObject({ misconfigured: true });
      expect(error.message).toContain(`${ctx.server.url}/policy/v1/roles`);
      expect(error.message).toContain(`HTTP ${status}`);
    }
    const failed = await ctx.events.until('failed', 2);
    expect(failed[0]!.message).toMatchObject({ applicationId: ctx.app, reason: 'status', misconfigured: true });
    // Once the API accepts tokens again, the very next caller is served.
    ctx.server.fault = undefined;
    expect(await authz.authorize(await identityFor(authz, ctx.app, { sub: 'actor-dave', jti: 'd' }), READ)).toMatchObject({ granted: true });
  });

  test('with policyToken, a 401 refuses the service itself: an outage (503, misconfigured) for everyone, not per caller', async () => {
    const authz = ctx.authorizer(P, { policyToken: () => Promise.resolve('service-token') });
    const { alice, bob } = await users(authz);
    ctx.server.fault = (_req, res) => { json(res, 401, {}); return true; };
    const error = await expectAuthzError(authz.authorize(alice, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(error).toMatchObject({ misconfigured: true });
    // The failure is the application's: bob is answered from it, within the spacing, without a request.
    await expectAuthzError(authz.authorize(bob, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);
  });
});
