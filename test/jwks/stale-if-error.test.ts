/**
 * Stale-if-error and background refresh against a real loopback JWKS: cached keys keep verifying
 * while the endpoint fails, until `maxStaleMs` after the last success, and are refreshed in the
 * background (without holding up the request) once older than `ttlMs`.
 */
import { beforeEach, describe, expect, test } from 'vitest';
import { json, KEY, KEY2, mint } from '../helpers/index.js';
import { bearer, expectAuthzError, upstreamReason, useJwksServer } from './harness.js';

const JWKS = { ttlMs: 10_000, minRefreshIntervalMs: 1_000, maxStaleMs: 60_000, timeoutMs: 2_000 };
/** RFC 5861 stale-if-error: stale is served for maxStaleMs after freshness ends. */
const STALE_END = JWKS.ttlMs + JWKS.maxStaleMs;

const ctx = useJwksServer(JWKS);
let token1: string;

const fail500 = (): void => { ctx.server.handler = (_req, res) => { json(res, 500, { error: 'down' }); }; };

beforeEach(() => { token1 = bearer(mint(ctx.server.url)); });

describe('stale-if-error', () => {
  test('HTTP 500: cached keys verify until exactly maxStaleMs after the last success, then 503', async () => {
    const a = ctx.make();
    const t0 = ctx.clock.now();
    await a.ready();
    fail500();

    ctx.clock.advance(JWKS.ttlMs + 1);
    await a.authenticate(token1);
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'failed', reason: 'status' });
    expect(ctx.server.requests).toHaveLength(2);

    ctx.clock.set(t0 + STALE_END);
    await a.authenticate(token1); // the last usable millisecond; starts another (failing) refresh
    await ctx.events.until(3);
    expect(ctx.server.requests).toHaveLength(3);

    ctx.clock.set(t0 + STALE_END + 1);
    // The last attempt was 1 ms ago: no new fetch, and the stale keys are no longer used.
    const error = await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('status');
    expect(ctx.server.requests).toHaveLength(3);

    // Past the backoff (twice the spacing after a second failure) the endpoint is asked again; still failing, still 503.
    ctx.clock.advance(2 * JWKS.minRefreshIntervalMs);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(4);
  });

  test('connection refused after the server closed: stale keys verify, then 503', async () => {
    const a = ctx.make();
    const t0 = ctx.clock.now();
    await a.ready();
    await ctx.server.close();

    ctx.clock.advance(JWKS.ttlMs + 1);
    await a.authenticate(token1);
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'failed', reason: 'network' });

    ctx.clock.set(t0 + STALE_END);
    await a.authenticate(token1);
    await ctx.events.until(3);

    ctx.clock.set(t0 + STALE_END + 2 * JWKS.minRefreshIntervalMs + 1);
    const error = await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');
    expect(ctx.events.events.map((e) => e.type)).toEqual(['refreshed', 'failed', 'failed', 'failed']);
  });

  test('the stale window is measured from the last success, not the first', async () => {
    const a = ctx.make();
    const t0 = ctx.clock.now();
    await a.ready();

    // A successful background refresh at t0 + 30 s moves the window.
    ctx.clock.set(t0 + 30_000);
    await a.authenticate(token1);
    await ctx.events.until(2);
    expect(ctx.events.events[1]?.type).toBe('refreshed');
    fail500();

    ctx.clock.set(t0 + 30_000 + STALE_END);
    await a.authenticate(token1);
    await ctx.events.until(3);
    expect(ctx.events.events[2]).toMatchObject({ type: 'failed', reason: 'status' });

    ctx.clock.advance(1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
  });

  test('recovery: once the endpoint answers again after the cooldown, tokens verify with fresh keys', async () => {
    const a = ctx.make();
    const t0 = ctx.clock.now();
    await a.ready();
    fail500();
    ctx.clock.set(t0 + STALE_END + 1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(2);

    ctx.server.handler = (_req, res) => { json(res, 200, { keys: [KEY.jwk, KEY2.jwk] }); };
    // Within the cooldown of the failed attempt: still 503, no fetch.
    ctx.clock.advance(JWKS.minRefreshIntervalMs - 1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(2);

    ctx.clock.advance(1);
    await a.authenticate(token1);
    await a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(ctx.server.requests).toHaveLength(3);
  });
});

describe('background refresh', () => {
  test('no refresh up to ttlMs; one refresh after it, which does not hold up the request', async () => {
    const a = ctx.make();
    await a.ready();
    ctx.clock.advance(JWKS.ttlMs);
    await a.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(1);

    // The endpoint now holds its answer until released, and publishes a second key.
    let release!: () => void;
    let arrived!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const requested = new Promise<void>((resolve) => { arrived = resolve; });
    ctx.server.handler = async (_req, res) => {
      arrived();
      await released;
      json(res, 200, { keys: [KEY.jwk, KEY2.jwk] });
    };
    ctx.clock.advance(1);
    // Answered from the cache while the refresh is still waiting on the server.
    const results = await Promise.all(Array.from({ length: 10 }, () => a.authenticate(token1)));
    expect(results).toHaveLength(10);
    await requested;
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.events).toHaveLength(1);
    release();
    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 2 });
    expect(ctx.server.requests).toHaveLength(2);

    // The new key came from the background refresh: no unknown-kid fetch needed.
    await a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(ctx.server.requests).toHaveLength(2);

    // Fresh again: no further refresh until ttlMs after this success.
    ctx.clock.advance(JWKS.ttlMs);
    await a.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a failing background refresh is retried no sooner than a healthy refresh would come', async () => {
    const a = ctx.make();
    await a.ready();
    fail500();
    ctx.clock.advance(JWKS.ttlMs + 1);
    for (let i = 0; i < 5; i += 1) await a.authenticate(token1);
    await ctx.events.until(2);
    for (let i = 0; i < 5; i += 1) await a.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(2);

    // Serving cached keys, the first retry waits at least 0.8 × ttlMs (the jitter drawn at 0 here),
    // not just the refetch budget: an outage never makes a replica ask more often.
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    await a.authenticate(token1);
    expect(ctx.server.requests).toHaveLength(2);
    ctx.clock.advance(0.8 * JWKS.ttlMs - JWKS.minRefreshIntervalMs);
    await a.authenticate(token1);
    await ctx.events.until(3);
    expect(ctx.server.requests).toHaveLength(3);
  });
});
