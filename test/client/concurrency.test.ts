/**
 * Sharing: concurrent calls for one (tenantId, expiryInSecs) make one IdP token request and one
 * exchange; exchanges in flight together share one idpToken() call; a shared failure reaches every
 * waiter and is not kept.
 */
import { describe, expect, test, vi } from 'vitest';
import { countingIdp, useTokenServer } from './harness.js';

const ctx = useTokenServer({ delayMs: 50 });

describe('concurrent calls', () => {
  test('20 concurrent calls for one key: one idpToken() call, one POST, one token for all', async () => {
    const idp = countingIdp(20);
    const client = ctx.client(idp.idpToken);
    const tokens = await Promise.all(Array.from({ length: 20 }, () => client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })));
    expect(idp.calls()).toBe(1);
    expect(ctx.server.seen).toHaveLength(1);
    expect(new Set(tokens).size).toBe(1);
    // And afterwards from the cache.
    await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    expect(ctx.server.seen).toHaveLength(1);
  });

  test('callers arriving while the exchange is on the wire (after idpToken() resolved) join it', async () => {
    const idp = countingIdp();
    const client = ctx.client(idp.idpToken);
    const first = client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    // The POST has arrived and is being answered (delayMs 50): polled, not slept, so a loaded machine cannot fail it.
    await vi.waitFor(() => { expect(ctx.server.seen).toHaveLength(1); }, { timeout: 5_000, interval: 2 });
    const late = await Promise.all(Array.from({ length: 5 }, () => client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })));
    expect(late.every((t) => t === late[0])).toBe(true);
    expect(await first).toBe(late[0]);
    expect(ctx.server.seen).toHaveLength(1);
    expect(idp.calls()).toBe(1);
  });

  test('different keys in flight together: one exchange each, one shared idpToken() call', async () => {
    const idp = countingIdp(20);
    const client = ctx.client(idp.idpToken);
    const keys = [['tenant-1', 3600], ['tenant-2', 3600], ['tenant-1', 600]] as const;
    const calls = keys.flatMap(([tenantId, expiryInSecs]) => Array.from({ length: 5 }, () => client.getToken({ tenantId, expiryInSecs })));
    const tokens = await Promise.all(calls);
    expect(new Set(tokens).size).toBe(3);
    expect(ctx.server.seen).toHaveLength(3);
    expect(idp.calls()).toBe(1);
    expect(new Set(ctx.server.seen.map((r) => r.headers.authorization))).toStrictEqual(new Set(['Bearer idp-token-1']));
  });

  test('a failed exchange rejects every waiter with the same error, and is not kept: the next call retries', async () => {
    const idp = countingIdp();
    const client = ctx.client(idp.idpToken);
    ctx.server.handler = (_req, res) => { res.writeHead(500); res.end(); };
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    const reasons = new Set(results.map((r) => (r as PromiseRejectedResult).reason));
    expect(reasons.size).toBe(1);
    expect([...reasons][0]).toMatchObject({ status: 500, code: 'ERR_TOKEN_EXCHANGE_FAILED' });
    expect(ctx.server.seen).toHaveLength(1);

    ctx.server.handler = undefined;
    await expect(client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 })).resolves.toMatch(/^eyJ/);
    expect(ctx.server.seen).toHaveLength(2);
    expect(idp.calls()).toBe(2);
  });

  test('a failing idpToken() is shared too, and the next call asks again', async () => {
    let calls = 0;
    const client = ctx.clients.make({
      baseUrl: ctx.server.url,
      idpKey: 'corp',
      now: ctx.clock.now,
      idpToken: async () => {
        calls += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (calls === 1) throw new Error('IdP down');
        return 'idp-ok';
      },
    });
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => client.getToken({ tenantId: `tenant-${i % 2}`, expiryInSecs: 3600 })));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_TOKEN_EXCHANGE_FAILED', status: 401 });
    expect(calls).toBe(1);
    expect(ctx.server.seen).toHaveLength(0);
    await expect(client.getToken({ tenantId: 'tenant-0', expiryInSecs: 3600 })).resolves.toMatch(/^eyJ/);
    expect(calls).toBe(2);
  });
});
