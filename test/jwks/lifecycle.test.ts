/** `ready()` and `close()` of an authorizer using a real loopback JWKS. */
import { performance } from 'node:perf_hooks';
import { describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { json, KEY, mint, startLoopback } from '../helpers/index.js';
import { bearer, expectAuthzError, upstreamReason, useJwksServer } from './harness.js';

const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 };

const ctx = useJwksServer(JWKS, { events: false });

function make(baseUrl = ctx.server.url, jwks: object = JWKS): Authorizer {
  return ctx.make({ baseUrl, jwks });
}

describe('ready()', () => {
  test('warms the cache: the first request needs no fetch', async () => {
    const a = make();
    expect(ctx.server.requests).toHaveLength(0);
    await expect(a.ready()).resolves.toMatchObject({ issuers: { [`${ctx.server.url}/authentication/v1`]: { ready: true } } });
    expect(ctx.server.requests).toHaveLength(1);
    await a.authenticate(bearer(mint(ctx.server.url)));
    await a.ready();
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('ready() and a burst of requests at once share one fetch', async () => {
    const keys = { keys: [KEY.jwk] };
    ctx.server.handler = (_req, res) => { setTimeout(() => { json(res, 200, keys); }, 30); };
    const a = make();
    const token = bearer(mint(ctx.server.url));
    await Promise.all([a.ready(), ...Array.from({ length: 10 }, () => a.authenticate(token)), a.ready()]);
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('rejects with 503 when the endpoint answers 500, and retries only after the cooldown', async () => {
    ctx.server.handler = (_req, res) => { json(res, 500, {}); };
    const a = make();
    const error = await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('status');
    await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);

    ctx.server.handler = (_req, res) => { json(res, 200, { keys: [KEY.jwk] }); };
    ctx.clock.advance(JWKS.minRefreshIntervalMs);
    await a.ready();
    expect(ctx.server.requests).toHaveLength(2);
    await a.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('rejects with 503 when nothing listens (connection refused)', async () => {
    const gone = await startLoopback(() => undefined);
    const url = gone.url;
    await gone.close();
    const a = make(url);
    const error = await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe('network');
    await expectAuthzError(a.authenticate(bearer(mint(url))), 'ERR_JWKS_UNAVAILABLE', 503);
  });
});

describe('close()', () => {
  test('resolves after traffic, with the default dispatcher', async () => {
    const a = make();
    await a.authenticate(bearer(mint(ctx.server.url)));
    await expect(a.close()).resolves.toBeUndefined();
  });

  test('resolves when nothing was ever fetched', async () => {
    const a = make();
    await expect(a.close()).resolves.toBeUndefined();
  });

  test('resolves promptly while a JWKS fetch is stalled', async () => {
    const timeoutMs = 200;
    ctx.server.handler = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{'); };
    const a = make(ctx.server.url, { ...JWKS, timeoutMs });
    const pending = a.ready().catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    await expect(a.close()).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(timeoutMs + 1_000);
    expect(await pending).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE', status: 503 });
  });
});

describe('close() is final', () => {
  test('close() twice resolves, and a closed authorizer answers 503 without fetching', async () => {
    const a = ctx.server.authorizer({ tokenCache: false });
    await a.close();
    await expect(a.close()).resolves.toBeUndefined();
    await expect(a.authenticate(ctx.server.bearer())).rejects.toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED', status: 503 });
    expect(ctx.server.requests).toHaveLength(0);
  });
});
