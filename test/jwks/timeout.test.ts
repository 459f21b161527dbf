/**
 * The JWKS fetch timeout against real loopback servers that stall: it bounds the whole fetch
 * (headers and body), not the idle time between bytes.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { describe, expect, test } from 'vitest';
import { json, KEY, KEY2, mint } from '../helpers/index.js';
import { bearer, expectAuthzError, upstreamReason, useJwksServer } from './harness.js';

const TIMEOUT_MS = 200;
const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: TIMEOUT_MS };

const ctx = useJwksServer(JWKS);

/** Sends headers and the start of a JWK Set, then one JSON whitespace byte every 20 ms, forever. */
function trickle(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"keys":[');
  const timer = setInterval(() => { res.write(' '); }, 20);
  res.on('close', () => { clearInterval(timer); });
}

const stalls: [string, (res: ServerResponse) => void][] = [
  ['never answers', () => undefined],
  ['sends headers, then stalls the body', (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"keys":[');
  }],
  ['trickles a byte every 20 ms (never idle, never done)', trickle],
];

describe('timeout', () => {
  test.each(stalls)('%s → 503 after about timeoutMs', async (_name, handler) => {
    ctx.server.handler = (_req, res) => { handler(res); };
    const a = ctx.make();
    const started = performance.now();
    const error = await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url))), 'ERR_JWKS_UNAVAILABLE', 503);
    const elapsed = performance.now() - started;
    expect(upstreamReason(error)).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_000);
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.events.events).toMatchObject([{ type: 'failed', reason: 'timeout' }]);
  });

  test('ready() times out the same way', async () => {
    ctx.server.handler = (_req, res) => { trickle(res); };
    const a = ctx.make();
    const started = performance.now();
    const error = await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
  });

  test('a slow but complete answer within timeoutMs is accepted', async () => {
    ctx.server.handler = (_req, res) => { setTimeout(() => { json(res, 200, { keys: [KEY.jwk] }); }, TIMEOUT_MS / 2); };
    const a = ctx.make();
    await a.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.events.events).toMatchObject([{ type: 'refreshed' }]);
  });

  test('with cached keys, a stalled refresh neither holds up requests nor drops the keys', async () => {
    // A longer timeout here, so that "answered before the refresh gave up" holds on a busy machine.
    const timeoutMs = 600;
    const a = ctx.make({ jwks: { ...JWKS, timeoutMs } });
    await a.ready();
    ctx.server.handler = (_req, res) => { trickle(res); };
    ctx.clock.advance(JWKS.ttlMs + 1);

    const token = bearer(mint(ctx.server.url));
    const started = performance.now();
    await a.authenticate(token);
    await a.authenticate(token);
    // Answered from the cache: the refresh, which can only end by timing out, has not ended yet.
    expect(ctx.events.events).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(timeoutMs);

    await ctx.events.until(2);
    expect(ctx.events.events[1]).toMatchObject({ type: 'failed', reason: 'timeout' });
    expect(ctx.server.requests).toHaveLength(2);
    await a.authenticate(token);

    // An unknown kid after the backoff (while keys are served: at most 1.6 × ttlMs) waits for one
    // (timing-out) fetch and gets a 503, not a 401.
    ctx.clock.advance(2 * JWKS.ttlMs);
    await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2))), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(3);
  });
});
