/**
 * Issue 9 §5: a GET (JWKS or policy) that fails because the server closed a pooled keep-alive
 * socket before answering is retried once on a fresh connection; only a second failure is an
 * outage. POSTs are never retried. Real loopback servers that close kept-alive sockets.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, test } from 'vitest';
import { httpGet, httpRequest, type UpstreamError } from '../../src/lib/upstream.js';
import { json, KEY2, mint, startLoopback, type Handler, type Loopback } from '../helpers/index.js';
import { bearer, expectAuthzError, useJwksServer } from './harness.js';

/**
 * Wraps `serve`: the first request of every connection is served; any later request on the same
 * (kept-alive) connection finds it closed by the server, as when the server's idle timeout fires
 * while the client reuses the socket.
 */
function closingKeptAliveSockets(serve: Handler, how: 'close' | 'reset' = 'close'): Handler {
  const served = new WeakSet<Socket>();
  return (req: IncomingMessage, res: ServerResponse) => {
    if (served.has(req.socket)) {
      // 'close' ends the connection (undici: UND_ERR_SOCKET); 'reset' sends a TCP RST (ECONNRESET).
      if (how === 'reset') req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    served.add(req.socket);
    return serve(req, res);
  };
}

/** Lets undici put the socket of the last answer back into its pool (it is released a tick after the body ends). */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 25));
}

const ctx = useJwksServer({ ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000 });

describe('httpRequest', () => {
  let server: Loopback | undefined;
  const agent = new Agent();
  afterEach(async () => { await server?.close(); });

  const options = { dispatcher: agent, timeoutMs: 2_000, maxBytes: 1_000, headers: {} };

  test.each(['close', 'reset'] as const)('a GET whose kept-alive socket the server ends (%s) is retried once on a fresh connection', async (how) => {
    server = await startLoopback(closingKeptAliveSockets((_req, res) => { json(res, 200, { ok: true }); }, how));
    expect((await httpGet(`${server.url}/x`, options)).statusCode).toBe(200);
    await settle();
    expect((await httpGet(`${server.url}/x`, options)).statusCode).toBe(200);
    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((r) => r.socket)).size).toBe(2);
  });

  test('the retry is bounded to one: a server resetting every request is a network failure after two requests', async () => {
    server = await startLoopback((req) => { req.socket.destroy(); });
    const error = await httpGet(`${server.url}/x`, options).catch((e: unknown) => e as UpstreamError);
    expect(error).toMatchObject({ name: 'UpstreamError', reason: 'network' });
    expect(server.requests).toHaveLength(2);
  });

  test('a POST is never retried', async () => {
    server = await startLoopback(closingKeptAliveSockets((_req, res) => { json(res, 200, { ok: true }); }));
    const post = { ...options, method: 'POST' as const, body: '{}', headers: { 'content-type': 'application/json' } };
    expect((await httpRequest(`${server.url}/x`, post)).statusCode).toBe(200);
    await settle();
    const error = await httpRequest(`${server.url}/x`, post).catch((e: unknown) => e as UpstreamError);
    expect(error).toMatchObject({ reason: 'network' });
    expect(server.requests).toHaveLength(2);
  });

  test('a timeout is not retried', async () => {
    server = await startLoopback(() => { /* never answers */ });
    const error = await httpGet(`${server.url}/x`, { ...options, timeoutMs: 150 }).catch((e: unknown) => e as UpstreamError);
    expect(error).toMatchObject({ reason: 'timeout' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('JWKS client', () => {
  test('a refetch on a kept-alive socket the server closed is retried, not an outage', async () => {
    const serve = ctx.server.handler;
    ctx.server.handler = closingKeptAliveSockets(serve);
    const authz = ctx.make();
    await authz.ready();
    ctx.clock.advance(1_000); // the unknown-kid cooldown
    await settle();
    // An unknown kid refetches over the pooled socket: closed, retried, answered. Still unknown: 401, not 503.
    await expectAuthzError(authz.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2))), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(3);
    expect(ctx.events.events.map((e) => e.type)).toEqual(['refreshed', 'refreshed']);
  });
});
