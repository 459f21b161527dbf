/**
 * The spec's IAM sends no ETag, so every revalidation and every refetch after a denial gets the
 * whole policy again. A body identical to the one the cached policy came from is recognised by its
 * bytes (SHA-256) before any parsing: it renews the cached policy's freshness, and is neither
 * parsed nor compiled again. A body that differs in any byte is parsed and checked as before.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { PolicyOptions } from '../../src/index.js';
import { json } from '../helpers/loopback.js';
import { driverCanWrite, examplePolicy } from '../helpers/policy-server.js';
import { identityFor, READ, usePolicyApi, WRITE } from './harness.js';

const P = { ttlMs: 60_000, maxStaleMs: 120_000, minRefreshIntervalMs: 5_000, timeoutMs: 3_000 } satisfies PolicyOptions;

const ctx = usePolicyApi();

/** Serves `server.policy` like the spec's IAM: no ETag, If-None-Match ignored, always 200. */
function noEtags(): void {
  ctx.server.fault = (_req, res) => { json(res, 200, ctx.server.policy); return true; };
}

/** Counts `JSON.parse` calls on exactly the text the server sends for `server.policy` now. */
function countBodyParses(): { readonly count: number } {
  const parse = JSON.parse.bind(JSON);
  const seen = { count: 0 };
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (text === JSON.stringify(ctx.server.policy)) seen.count += 1;
    return parse(text, reviver) as unknown;
  });
  return seen;
}

afterEach(() => { vi.restoreAllMocks(); });

describe('a policy body identical to the cached one', () => {
  test('on revalidation after ttlMs: freshness renewed, not parsed again', async () => {
    noEtags();
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    const parses = countBodyParses();
    ctx.clock.advance(P.ttlMs);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' }); // stale, revalidates
    await ctx.events.until('revalidated');
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    expect(parses.count).toBe(0);
    // Fresh again: no request until ttlMs later.
    ctx.clock.advance(P.ttlMs - 1);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.events.types()).toEqual(['fetched', 'stale-served', 'revalidated']);
  });

  test('on a refetch after a denial: the denial stands, nothing parsed', async () => {
    noEtags();
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
    const parses = countBodyParses();
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(2);
    expect(parses.count).toBe(0);
    expect(ctx.events.types()).toEqual(['fetched', 'revalidated', 'denied']);
  });

  test('bytes that differ are parsed (once): a new policy is picked up, the same changeId in other bytes is checked', async () => {
    noEtags();
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
    // Same changeId, other bytes (members reordered): parsed and checked, the cached policy kept.
    const { applicationId, changeId, roles } = examplePolicy('c1', ctx.app);
    ctx.server.policy = { roles, changeId, applicationId };
    let parses = countBodyParses();
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
    expect(parses.count).toBe(1);
    // Those bytes again: recognised, not parsed.
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
    expect(parses.count).toBe(1);
    vi.restoreAllMocks();
    // A changed policy: parsed, compiled, granted.
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    parses = countBodyParses();
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(parses.count).toBe(1);
    expect(ctx.server.requests).toHaveLength(4);
  });

  test('a malformed body is never remembered as the cached one', async () => {
    noEtags();
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
    const good = ctx.server.policy;
    ctx.server.policy = { ...good, roles: [{ key: '' }] };
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('failed');
    // After the backoff (while a copy is served: at most 1.6 × ttlMs, within maxStaleMs here).
    ctx.clock.advance(1.6 * P.ttlMs);
    await authz.authorize(id, READ);
    await ctx.events.until('failed', 2);
    expect(ctx.events.types().filter((t) => t === 'revalidated')).toHaveLength(0);
  });
});
