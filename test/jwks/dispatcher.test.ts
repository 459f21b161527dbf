/**
 * The `dispatcher` option: every JWKS request goes through the given undici Dispatcher. An undici
 * `MockAgent` with net connect disabled stands in front of a real loopback server, which must see
 * nothing.
 */
import { MockAgent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { type Authorizer } from '../../src/index.js';
import { KEY, KEY2, mint } from '../helpers/index.js';
import { bearer, expectAuthzError, JWKS_PATH, recordJwksEvents, upstreamReason, useJwksServer } from './harness.js';

const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 };
const ORIGIN = 'https://iam.example.test';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
// Registered before useJwksServer's hooks, so that it runs after them: once the authorizer is closed.
afterEach(() => agent.close());
const ctx = useJwksServer(JWKS, { events: false });

function make(baseUrl: string): Authorizer {
  return ctx.make({ baseUrl, dispatcher: agent });
}

describe('dispatcher', () => {
  test('fetches the JWKS through the MockAgent, with the JWK Set accept header', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: JWKS_PATH, method: 'GET', headers: { accept: 'application/jwk-set+json, application/json' } })
      .reply(200, { keys: [KEY.jwk] }, JSON_HEADERS);
    const a = make(ORIGIN);
    const id = await a.authenticate(bearer(mint(ORIGIN)));
    expect(id.claims.iss).toBe(`${ORIGIN}/authentication/v1`);
    agent.assertNoPendingInterceptors();
  });

  test('every fetch (warm-up, unknown-kid refetch, background refresh) uses it; the real server sees nothing', async () => {
    const bodies = [{ keys: [KEY.jwk] }, { keys: [KEY.jwk, KEY2.jwk] }, { keys: [KEY2.jwk] }];
    let calls = 0;
    agent
      .get(ctx.server.url)
      .intercept({ path: JWKS_PATH, method: 'GET' })
      .reply(200, () => bodies[Math.min(calls++, bodies.length - 1)]!, JSON_HEADERS)
      .persist();
    const events = recordJwksEvents(ctx.server.url);
    onTestFinished(() => { events.dispose(); });
    const a = make(ctx.server.url);
    await a.ready();
    expect(calls).toBe(1);

    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    await a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    expect(calls).toBe(2);

    ctx.clock.advance(JWKS.ttlMs + 1);
    await a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2)));
    await events.until(3);
    expect(calls).toBe(3);
    expect(events.events.map((e) => e.type)).toEqual(['refreshed', 'refreshed', 'refreshed']);
    await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url))), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(0);
  });

  test('no interceptor and net connect disabled → 503, and the real server sees nothing', async () => {
    const a = make(ctx.server.url);
    const error = await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url))), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');
    await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(0);
  });

  test('a 500 from the MockAgent is a 503; recovery after the cooldown', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: JWKS_PATH, method: 'GET' }).reply(500, 'oops');
    pool.intercept({ path: JWKS_PATH, method: 'GET' }).reply(200, { keys: [KEY.jwk] }, JSON_HEADERS);
    const a = make(ORIGIN);
    const token = bearer(mint(ORIGIN));
    const error = await expectAuthzError(a.authenticate(token), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('status');
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    await a.authenticate(token);
    agent.assertNoPendingInterceptors();
  });

  test('close() resolves and leaves a dispatcher it does not own open', async () => {
    agent.get(ORIGIN).intercept({ path: JWKS_PATH, method: 'GET' }).reply(200, { keys: [KEY.jwk] }, JSON_HEADERS).times(2);
    const a = make(ORIGIN);
    await a.ready();
    await expect(a.close()).resolves.toBeUndefined();
    const res = await request(`${ORIGIN}${JWKS_PATH}`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });
});
