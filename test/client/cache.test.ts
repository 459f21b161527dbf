/**
 * Caching per (tenantId, expiryInSecs) until `exp - margin`, the margin being `min(60 s, 10% of
 * exp - iat)` by default or `refreshMarginSec`; LRU bound; `clear()`; tokens that cannot be kept.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { IamTokenClientOptions } from '../../src/client/index.js';
import { countingIdp, decodePayload, issue, useTokenServer } from './harness.js';

const ctx = useTokenServer();

function make(extra: Partial<IamTokenClientOptions> = {}) {
  const idp = countingIdp();
  const client = ctx.client(idp.idpToken, extra);
  return { client, idp };
}

describe('cache', () => {
  test('a second call is served from the cache: no IdP token, no request', async () => {
    const { client, idp } = make();
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    ctx.clock.advance(1_000);
    const second = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    expect(second).toBe(first);
    expect(ctx.server.seen).toHaveLength(1);
    expect(idp.calls()).toBe(1);
  });

  test.each([
    // expiryInSecs, default margin (s): min(60, 10%)
    [3600, 60],
    [600, 60],
    [300, 30],
    [20, 2],
  ])('expiryInSecs %i: served until exp - %i s, refreshed from then on', async (expiry, margin) => {
    const { client, idp } = make();
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: expiry });
    ctx.clock.advance((expiry - margin) * 1000 - 1);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: expiry })).resolves.toBe(first);
    expect(ctx.server.seen).toHaveLength(1);
    ctx.clock.advance(1);
    const second = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: expiry });
    expect(second).not.toBe(first);
    expect(ctx.server.seen).toHaveLength(2);
    expect(idp.calls()).toBe(2);
    // The refreshed token is cached in turn.
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: expiry })).resolves.toBe(second);
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('refreshMarginSec replaces the default margin', async () => {
    const { client } = make({ refreshMarginSec: 300 });
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    ctx.clock.advance(3_299_999);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toBe(first);
    ctx.clock.advance(1);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.not.toBe(first);
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('refreshMarginSec 0 serves the token until its exp exactly', async () => {
    const { client } = make({ refreshMarginSec: 0 });
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 60 });
    ctx.clock.advance(59_999);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 60 })).resolves.toBe(first);
    ctx.clock.advance(1);
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 60 });
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('a margin not shorter than the lifetime disables caching (every call exchanges)', async () => {
    const { client, idp } = make({ refreshMarginSec: 60 });
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 60 });
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 60 });
    expect(ctx.server.seen).toHaveLength(2);
    expect(idp.calls()).toBe(2);
  });

  test('the cache follows the token\'s exp, not the requested expiry (an IAM may shorten it)', async () => {
    ctx.server.handler = (req, res) => {
      const { tenantId } = JSON.parse(req.body) as { tenantId: string };
      const token = issue(tenantId, 100, ctx.clock.sec); // asked 3600, issued for 100 s
      res.writeHead(200, { 'content-type': 'application/jwt' });
      res.end(token);
    };
    const { client } = make();
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    ctx.clock.advance(89_999); // margin 10 s
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toBe(first);
    ctx.clock.advance(1);
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('without iat the lifetime is counted from receipt', async () => {
    ctx.server.handler = (_req, res) => {
      const token = issue('tenant-1', 0, 0, { iat: undefined, exp: ctx.clock.sec + 300 });
      res.writeHead(200, { 'content-type': 'application/jwt' });
      res.end(token);
    };
    const { client } = make();
    const first = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 300 });
    ctx.clock.advance(269_999); // margin 30 s
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 300 })).resolves.toBe(first);
    ctx.clock.advance(1);
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 300 });
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('a token already expired on arrival (clock skew) is returned but not kept', async () => {
    ctx.server.handler = (_req, res) => {
      const token = issue('tenant-1', 3600, ctx.clock.sec - 7200);
      res.writeHead(200, { 'content-type': 'application/jwt' });
      res.end(token);
    };
    const { client } = make();
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toMatch(/^eyJ/);
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('another tenant or another expiry is another entry', async () => {
    const { client } = make();
    const a = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    const b = await client.getToken({ tenantId: 'tenant-2', expiryInSecs: 3600 });
    const c = await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600 });
    expect(new Set([a, b, c]).size).toBe(3);
    expect(ctx.server.seen.map((r) => JSON.parse(r.body))).toStrictEqual([
      { tenantId: 'tenant-1', expiryInSecs: 3600, tokenFormat: 't1' },
      { tenantId: 'tenant-2', expiryInSecs: 3600, tokenFormat: 't1' },
      { tenantId: 'tenant-1', expiryInSecs: 600, tokenFormat: 't1' },
    ]);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toBe(a);
    await expect(client.getToken({ tenantId: 'tenant-2', expiryInSecs: 3600 })).resolves.toBe(b);
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 600 })).resolves.toBe(c);
    expect(ctx.server.seen).toHaveLength(3);
  });

  test('a tenant containing the key separator never hits another identity\'s entry', async () => {
    // A user's token for tenant "t" and the service's own token for tenant "t:<hash of the user's
    // IdP token>" must be two entries: once the same key string, the service got the user's token.
    const { client } = make();
    const userIdp = 'user-idp-token';
    const forUser = await client.getToken({ tenantId: 't', expiryInSecs: 3600, idpToken: userIdp });
    const trickyTenant = `t:${createHash('sha256').update(userIdp).digest('base64url')}`;
    const own = await client.getToken({ tenantId: trickyTenant, expiryInSecs: 3600 });
    expect(own).not.toBe(forUser);
    expect(decodePayload(own).aud).toBe(trickyTenant);
    expect(ctx.server.seen).toHaveLength(2);
  });

  test('at most maxCachedTokens entries (least recently used goes first)', async () => {
    const { client } = make({ maxCachedTokens: 2 });
    await client.getToken({ tenantId: 'a', expiryInSecs: 3600 });
    await client.getToken({ tenantId: 'b', expiryInSecs: 3600 });
    await client.getToken({ tenantId: 'a', expiryInSecs: 3600 }); // a is now the most recent
    await client.getToken({ tenantId: 'c', expiryInSecs: 3600 }); // evicts b
    expect(ctx.server.seen).toHaveLength(3);
    await client.getToken({ tenantId: 'a', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(3);
    await client.getToken({ tenantId: 'b', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(4);
  });

  test('clear() drops every cached token', async () => {
    const { client } = make();
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    client.clear();
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(2);
  });
});
