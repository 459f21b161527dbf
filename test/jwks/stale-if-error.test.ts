/**
 * Stale-if-error and background refresh against a real loopback JWKS: cached keys keep verifying
 * while the endpoint fails, until `maxStaleMs` after the last success, and are refreshed in the
 * background (without holding up the request) once older than `cacheMaxAgeMs`.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { json } from '../helpers/loopback.js';
import { KEY, KEY2, mint, startJwksServer } from '../helpers/fixtures.js';
import { bearer, expectAuthzError, manualClock, recordJwksEvents, upstreamReason, type Clock, type EventRecorder } from './harness.js';

const JWKS = { cacheMaxAgeMs: 10_000, cooldownMs: 1_000, maxStaleMs: 60_000, timeoutMs: 2_000 };

let server: Awaited<ReturnType<typeof startJwksServer>>;
let clock: Clock;
let events: EventRecorder;
let authz: Authorizer | undefined;
let token1: string;

function make(): Authorizer {
  authz = createAuthorizer({ baseUrl: server.url, now: clock.now, tokenCache: false, jwks: JWKS });
  return authz;
}

const fail500 = (): void => { server.handler = (_req, res) => { json(res, 500, { error: 'down' }); }; };

beforeEach(async () => {
  server = await startJwksServer([KEY]);
  clock = manualClock();
  events = recordJwksEvents(server.url);
  token1 = bearer(mint(server.url));
});

afterEach(async () => {
  await authz?.close();
  authz = undefined;
  events.dispose();
  await server.close();
});

describe('stale-if-error', () => {
  test('HTTP 500: cached keys verify until exactly maxStaleMs after the last success, then 503', async () => {
    const a = make();
    const t0 = clock.now();
    await a.ready();
    fail500();

    clock.advance(JWKS.cacheMaxAgeMs + 1);
    await a.authenticate(token1);
    await events.until(2);
    expect(events.events[1]).toMatchObject({ type: 'failed', reason: 'status' });
    expect(server.requests).toHaveLength(2);

    clock.set(t0 + JWKS.maxStaleMs);
    await a.authenticate(token1); // the last usable millisecond; starts another (failing) refresh
    await events.until(3);
    expect(server.requests).toHaveLength(3);

    clock.set(t0 + JWKS.maxStaleMs + 1);
    // The last attempt was 1 ms ago: no new fetch, and the stale keys are no longer used.
    const error = await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('status');
    expect(server.requests).toHaveLength(3);

    // Past the cooldown the endpoint is asked again; still failing, still 503.
    clock.advance(JWKS.cooldownMs);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(server.requests).toHaveLength(4);
  });

  test('connection refused after the server closed: stale keys verify, then 503', async () => {
    const a = make();
    const t0 = clock.now();
    await a.ready();
    await server.close();

    clock.advance(JWKS.cacheMaxAgeMs + 1);
    await a.authenticate(token1);
    await events.until(2);
    expect(events.events[1]).toMatchObject({ type: 'failed', reason: 'network' });

    clock.set(t0 + JWKS.maxStaleMs);
    await a.authenticate(token1);
    await events.until(3);

    clock.set(t0 + JWKS.maxStaleMs + JWKS.cooldownMs + 1);
    const error = await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');
    expect(events.events.map((e) => e.type)).toEqual(['refreshed', 'failed', 'failed', 'failed']);
  });

  test('the stale window is measured from the last success, not the first', async () => {
    const a = make();
    const t0 = clock.now();
    await a.ready();

    // A successful background refresh at t0 + 30 s moves the window.
    clock.set(t0 + 30_000);
    await a.authenticate(token1);
    await events.until(2);
    expect(events.events[1]?.type).toBe('refreshed');
    fail500();

    clock.set(t0 + 30_000 + JWKS.maxStaleMs);
    await a.authenticate(token1);
    await events.until(3);
    expect(events.events[2]).toMatchObject({ type: 'failed', reason: 'status' });

    clock.advance(1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
  });

  test('recovery: once the endpoint answers again after the cooldown, tokens verify with fresh keys', async () => {
    const a = make();
    const t0 = clock.now();
    await a.ready();
    fail500();
    clock.set(t0 + JWKS.maxStaleMs + 1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(server.requests).toHaveLength(2);

    server.handler = (_req, res) => { json(res, 200, { keys: [KEY.jwk, KEY2.jwk] }); };
    // Within the cooldown of the failed attempt: still 503, no fetch.
    clock.advance(JWKS.cooldownMs - 1);
    await expectAuthzError(a.authenticate(token1), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(server.requests).toHaveLength(2);

    clock.advance(1);
    await a.authenticate(token1);
    await a.authenticate(bearer(mint(server.url, {}, {}, KEY2)));
    expect(server.requests).toHaveLength(3);
  });
});

describe('background refresh', () => {
  test('no refresh up to cacheMaxAgeMs; one refresh after it, which does not hold up the request', async () => {
    const a = make();
    await a.ready();
    clock.advance(JWKS.cacheMaxAgeMs);
    await a.authenticate(token1);
    expect(server.requests).toHaveLength(1);

    // The endpoint now holds its answer until released, and publishes a second key.
    let release!: () => void;
    let arrived!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const requested = new Promise<void>((resolve) => { arrived = resolve; });
    server.handler = async (_req, res) => {
      arrived();
      await released;
      json(res, 200, { keys: [KEY.jwk, KEY2.jwk] });
    };
    clock.advance(1);
    // Answered from the cache while the refresh is still waiting on the server.
    const results = await Promise.all(Array.from({ length: 10 }, () => a.authenticate(token1)));
    expect(results).toHaveLength(10);
    await requested;
    expect(server.requests).toHaveLength(2);
    expect(events.events).toHaveLength(1);
    release();
    await events.until(2);
    expect(events.events[1]).toMatchObject({ type: 'refreshed', keyCount: 2 });
    expect(server.requests).toHaveLength(2);

    // The new key came from the background refresh: no unknown-kid fetch needed.
    await a.authenticate(bearer(mint(server.url, {}, {}, KEY2)));
    expect(server.requests).toHaveLength(2);

    // Fresh again: no further refresh until cacheMaxAgeMs after this success.
    clock.advance(JWKS.cacheMaxAgeMs);
    await a.authenticate(token1);
    expect(server.requests).toHaveLength(2);
  });

  test('a failing background refresh is retried at most once per cooldown', async () => {
    const a = make();
    await a.ready();
    fail500();
    clock.advance(JWKS.cacheMaxAgeMs + 1);
    for (let i = 0; i < 5; i += 1) await a.authenticate(token1);
    await events.until(2);
    for (let i = 0; i < 5; i += 1) await a.authenticate(token1);
    expect(server.requests).toHaveLength(2);

    clock.advance(JWKS.cooldownMs);
    await a.authenticate(token1);
    await events.until(3);
    expect(server.requests).toHaveLength(3);
  });
});
