/**
 * Cold start against a real loopback JWKS that misbehaves: every failure to get keys is a 503
 * `ERR_JWKS_UNAVAILABLE`, never a 401, and the endpoint is asked again only after the cooldown.
 */
import type { ServerResponse } from 'node:http';
import { Agent, interceptors } from 'undici';
import { afterEach, beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { generateSigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { json, KEY, KEY2, mint, startLoopback, type Loopback } from '../helpers/index.js';
import { bearer, expectAuthzError, JWKS_PATH, upstreamReason, useJwksServer } from './harness.js';

const MAX_BYTES = 4096;
const JWKS = { ttlMs: 60_000, minRefreshIntervalMs: 1_000, maxStaleMs: 600_000, timeoutMs: 2_000, maxBytes: MAX_BYTES };
const GOOD = JSON.stringify({ keys: [KEY.jwk] });

const ctx = useJwksServer(JWKS);

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/** Writes `body` in 512-byte chunks without a content-length (chunked transfer encoding). */
function sendChunked(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  for (let i = 0; i < body.length; i += 512) res.write(body.slice(i, i + 512));
  res.end();
}

/** A valid JWK Set padded with JSON whitespace to exactly `bytes` bytes. */
function padded(bytes: number): string {
  return GOOD.slice(0, -1) + ' '.repeat(bytes - GOOD.length) + '}';
}

const weak = generateSigningKey({ kid: 'key-1', modulusLength: 1024 });

type Case = [name: string, handler: (res: ServerResponse) => void, reason: string];
const cases: Case[] = [
  ['HTTP 500', (res) => { json(res, 500, { keys: [KEY.jwk] }); }, 'status'],
  ['HTTP 404', (res) => { send(res, 404, 'not found'); }, 'status'],
  ['HTTP 204 without a body', (res) => { res.writeHead(204); res.end(); }, 'malformed'],
  ['garbage JSON', (res) => { send(res, 200, '{"keys":[{"kty":"RSA"'); }, 'malformed'],
  ['HTML', (res) => { send(res, 200, '<html>maintenance</html>', { 'content-type': 'text/html' }); }, 'malformed'],
  ['{"keys":"x"}', (res) => { send(res, 200, '{"keys":"x"}'); }, 'malformed'],
  ['{"keys":["x"]}', (res) => { send(res, 200, '{"keys":["x"]}'); }, 'malformed'],
  ['null', (res) => { send(res, 200, 'null'); }, 'malformed'],
  ['a bare array of keys', (res) => { send(res, 200, JSON.stringify([KEY.jwk])); }, 'malformed'],
  ['an empty keys array', (res) => { send(res, 200, '{"keys":[]}'); }, 'malformed'],
  ['only unusable keys (oct, 1024-bit, private, enc)', (res) => {
    const keys = [
      { kty: 'oct', kid: 'key-1', k: Buffer.from('secret').toString('base64url') },
      weak.jwk,
      { ...KEY.jwk, d: 'AQAB' },
      { ...KEY.jwk, use: 'enc' },
    ];
    json(res, 200, { keys });
  }, 'malformed'],
  [`oversize with content-length (${MAX_BYTES + 1} bytes)`, (res) => { send(res, 200, padded(MAX_BYTES + 1)); }, 'oversize'],
  [`oversize, chunked without content-length (${MAX_BYTES + 1} bytes)`, (res) => { sendChunked(res, padded(MAX_BYTES + 1)); }, 'oversize'],
  ['oversize, chunked, 1 MB', (res) => { sendChunked(res, padded(1 << 20)); }, 'oversize'],
];

describe('cold start', () => {
  test.each(cases)('%s → 503 ERR_JWKS_UNAVAILABLE, recovery after the cooldown', async (_name, handler, reason) => {
    ctx.server.handler = (_req, res) => { handler(res); };
    const a = ctx.make();
    const token = bearer(mint(ctx.server.url));

    const error = await expectAuthzError(a.authenticate(token), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(upstreamReason(error)).toBe(reason);
    expect(error.message).not.toContain(token.slice(7));
    expect(ctx.server.requests).toHaveLength(1);
    expect(ctx.events.events).toMatchObject([{ type: 'failed', reason }]);

    // An unknown kid is also a 503 here: nothing can be known about it.
    await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url, {}, {}, KEY2))), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);

    // The endpoint is healthy again, but the cooldown of the failed attempt has not passed.
    ctx.server.handler = (_req, res) => { send(res, 200, GOOD); };
    ctx.clock.advance(JWKS.minRefreshIntervalMs - 1);
    await expectAuthzError(a.authenticate(token), 'ERR_JWKS_UNAVAILABLE', 503);
    expect(ctx.server.requests).toHaveLength(1);

    ctx.clock.advance(1);
    const id = await a.authenticate(token);
    expect(id.header.kid).toBe('key-1');
    expect(ctx.server.requests).toHaveLength(2);
  });

  test.each([
    ['with content-length', (res: ServerResponse) => { send(res, 200, padded(MAX_BYTES)); }],
    ['chunked', (res: ServerResponse) => { sendChunked(res, padded(MAX_BYTES)); }],
  ])('a body of exactly maxBytes is accepted (%s)', async (_name, handler) => {
    ctx.server.handler = (_req, res) => { handler(res); };
    const a = ctx.make();
    await a.authenticate(bearer(mint(ctx.server.url)));
    expect(ctx.server.requests).toHaveLength(1);
  });

  describe('redirects are never followed', () => {
    let canary: Loopback;
    beforeEach(async () => { canary = await startLoopback((_req, res) => { send(res, 200, GOOD); }); });
    afterEach(async () => { await canary.close(); });

    test.each([301, 302, 303, 307, 308])('%i to another loopback server → 503, the target sees nothing', async (status) => {
      ctx.server.handler = (_req, res) => {
        res.writeHead(status, { location: `${canary.url}${JWKS_PATH}`, 'content-length': '0' });
        res.end();
      };
      const a = ctx.make();
      const error = await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url))), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(upstreamReason(error)).toBe('redirect');
      expect(ctx.server.requests).toHaveLength(1);
      expect(canary.requests).toHaveLength(0);
      // ready() does not follow it either.
      ctx.clock.advance(JWKS.minRefreshIntervalMs);
      await expectAuthzError(a.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(ctx.server.requests).toHaveLength(2);
      expect(canary.requests).toHaveLength(0);
    });

    test('not even through a dispatcher composed with undici\'s redirect interceptor', async () => {
      ctx.server.handler = (_req, res) => {
        res.writeHead(302, { location: `${canary.url}${JWKS_PATH}`, 'content-length': '0' });
        res.end();
      };
      const agent = new Agent();
      onTestFinished(() => agent.close());
      const authz = ctx.make({ dispatcher: agent.compose(interceptors.redirect({ maxRedirections: 3 })) });
      const error = await expectAuthzError(authz.authenticate(bearer(mint(ctx.server.url))), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(upstreamReason(error)).toBe('redirect');
      expect(ctx.server.requests).toHaveLength(1);
      expect(canary.requests).toHaveLength(0);
    });
  });

  test('unusable members are skipped while the usable key verifies; a token signed by a skipped key is a 401', async () => {
    const weakOther = generateSigningKey({ kid: 'weak', modulusLength: 1024 });
    ctx.server.keys = [KEY.jwk, weakOther.jwk, { kty: 'oct', kid: 'hmac', k: 'c2VjcmV0' }];
    const a = ctx.make();
    await a.authenticate(bearer(mint(ctx.server.url)));
    await expectAuthzError(a.authenticate(bearer(mint(ctx.server.url, {}, {}, weakOther))), 'ERR_TOKEN_INVALID', 401);
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('50 concurrent cold-start requests against a failing endpoint share one fetch and all get 503', async () => {
    ctx.server.handler = (_req, res) => { setTimeout(() => { json(res, 500, {}); }, 30); };
    const a = ctx.make();
    const token = bearer(mint(ctx.server.url));
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => a.authenticate(token)));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE', status: 503 });
    }
    expect(ctx.server.requests).toHaveLength(1);
  });
});
