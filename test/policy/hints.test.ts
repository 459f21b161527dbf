/**
 * `policy.hints`: a hint from the fleet makes a replica revalidate at once (one conditional request,
 * within minRefreshIntervalMs), never decides anything itself; a new changeId is published once,
 * a received one never again; a denial does not refetch while the channel says the changeId held
 * is the latest; a channel that is down or broken leaves the TTL behaviour as it was.
 * Real loopback policy API, real signatures; the channel is an in-memory one.
 */
import { describe, expect, test, vi } from 'vitest';
import type { HintChannel, PolicyOptions } from '../../src/index.js';
import type { PolicyHint } from '../../src/policy/hints.js';
import { driverCanWrite, examplePolicy, servePolicy } from '../helpers/policy-server.js';
import { BASE, Gate, identityFor, READ, usePolicyApi, WRITE } from './harness.js';

const P = { ttlMs: 60_000, maxStaleMs: 120_000, minRefreshIntervalMs: 5_000, timeoutMs: 3_000 } satisfies PolicyOptions;
const ISSUER = `${BASE}/authentication/v1`;

/** An in-memory channel: delivers to every subscriber (the publisher too), records what was published. */
class MemoryHints implements HintChannel {
  readonly published: PolicyHint[] = [];
  readonly listeners = new Set<(hint: PolicyHint) => void>();
  subscribes = 0;
  connected = true;
  publish(hint: PolicyHint): Promise<void> {
    this.published.push(hint);
    this.deliver(hint);
    return Promise.resolve();
  }
  subscribe(listener: (hint: PolicyHint) => void): () => void {
    this.subscribes += 1;
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }
  /** What another replica (or an attacker) would send. */
  deliver(hint: unknown): void {
    for (const l of this.listeners) l(hint as PolicyHint);
  }
}

const ctx = usePolicyApi();
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function replica(hints: HintChannel, extra: PolicyOptions = {}) {
  const authz = ctx.authorizer({ ...P, ...extra, hints });
  const id = await identityFor(authz, ctx.app);
  expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
  return { authz, id };
}

describe('policy.hints', () => {
  test('is checked: null, a non-object or an object without publish/subscribe is a TypeError naming it', () => {
    for (const hints of [null, 1, {}, { publish: () => Promise.resolve() }, { subscribe: () => () => {} }]) {
      expect(() => ctx.authorizer({ ...P, hints: hints as unknown as HintChannel })).toThrow(/policy\.hints/);
    }
  });

  test('construction subscribes to nothing; the first use subscribes once for hints and once for revocations; close() unsubscribes', async () => {
    const hints = new MemoryHints();
    const authz = ctx.authorizer({ ...P, hints });
    expect(hints.subscribes).toBe(0);
    const id = await identityFor(authz, ctx.app);
    await authz.authorize(id, READ);
    await authz.authorize(id, READ);
    expect(hints.subscribes).toBe(2);
    expect(hints.listeners.size).toBe(2);
    await authz.close();
    expect(hints.listeners.size).toBe(0);
  });

  test('a hint with another changeId makes one revalidation, and the new grant applies', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    // A grant: no denial refetch involved; the hint alone starts the revalidation.
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
    await ctx.events.until('changed');
    expect(ctx.server.requests).toHaveLength(2);
    expect(ctx.server.requests[1]!.headers['if-none-match']).toBe('"c1"');
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
    // Received, not re-published: the replica found nothing the fleet did not know.
    expect(hints.published).toHaveLength(0);
  });

  test('a hint survives a revalidation refused for one caller\'s token: the next caller\'s token revalidates', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    const revoked = await identityFor(authz, ctx.app, { sub: 'actor-revoked' });
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    // The IAM refuses the revoked caller's token (still validly signed), and only that one.
    ctx.server.fault = (req, res) => {
      if (req.headers.authorization !== `Bearer ${revoked.token}`) return false;
      res.writeHead(401).end();
      return true;
    };
    ctx.clock.advance(P.minRefreshIntervalMs);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    await authz.authorize(revoked, READ);
    await vi.waitFor(() => { expect(ctx.server.requests).toHaveLength(2); });
    await tick();
    // The hint still stands: the next caller's request revalidates with its own token.
    await authz.authorize(id, READ);
    await ctx.events.until('changed');
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
  });

  test('a replayed hint of the changeId held cancels no revalidation: a revocation still lands', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    // The IAM takes READ away from DRIVER under c2.
    ctx.server.policy = { ...examplePolicy('c2', ctx.app), roles: [{ key: 'DRIVER' }] };
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    // Anyone who can publish on the channel replays the old changeId, again and again.
    for (let i = 0; i < 3; i++) hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c1' });
    ctx.clock.advance(P.minRefreshIntervalMs);
    await authz.authorize(id, READ);
    await ctx.events.until('changed');
    expect(ctx.server.requests).toHaveLength(2);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: false, changeId: 'c2' });
  });

  test('a hint that arrives while a revalidation runs is not answered by it: one more revalidation follows', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    const gate = new Gate();
    const old = examplePolicy('c1', ctx.app);
    // A revalidation sent before the change: the IAM answers it from its state at that time (c1).
    ctx.server.fault = (req, res) => {
      gate.hold(() => { servePolicy(req, res, old); });
      return true;
    };
    ctx.clock.advance(P.ttlMs);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    await gate.until(1);
    ctx.server.fault = undefined;
    ctx.server.policy = { ...examplePolicy('c2', ctx.app), roles: [{ key: 'DRIVER' }] };
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    gate.releaseAll();
    await ctx.events.until('revalidated');
    // Answered with c1: the hint still stands, and the next request within the spacing revalidates again.
    ctx.clock.advance(P.minRefreshIntervalMs);
    await authz.authorize(id, READ);
    await ctx.events.until('changed');
    expect(ctx.server.requests).toHaveLength(3);
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: false, changeId: 'c2' });
  });

  test('a revalidation sent before a hint answers it when it brings the hinted changeId', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    const gate = new Gate();
    ctx.server.fault = gate.fault(ctx.server);
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.ttlMs);
    await authz.authorize(id, READ);
    await gate.until(1);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    gate.releaseAll();
    await ctx.events.until('changed');
    ctx.server.fault = undefined;
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    await tick();
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a flood of hints makes at most one fetch per minRefreshIntervalMs', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    ctx.clock.advance(P.minRefreshIntervalMs);
    for (let i = 0; i < 3; i++) {
      for (let h = 0; h < 100; h++) hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: `x${i}-${h}` });
      for (let c = 0; c < 20; c++) await authz.authorize(id, READ);
      await tick();
    }
    await ctx.events.until('revalidated');
    expect(ctx.server.requests).toHaveLength(2);
    ctx.clock.advance(P.minRefreshIntervalMs);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'y' });
    await authz.authorize(id, READ);
    await ctx.events.until('revalidated', 2);
    expect(ctx.server.requests).toHaveLength(3);
  });

  test('a replayed (old) or forged (unknown) changeId changes no decision: the IAM\'s policy decides', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    ctx.server.policy = examplePolicy('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    await authz.authorize(id, READ);
    await ctx.events.until('changed');
    for (const [n, changeId] of [[3, 'c1'], [4, 'forged-grant-everything']] as const) {
      ctx.clock.advance(P.minRefreshIntervalMs);
      for (let h = 0; h < 10; h++) hints.deliver({ issuer: ISSUER, application: ctx.app, changeId, roles: ['OWNER'], policy: driverCanWrite(changeId, ctx.app) });
      expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c2' });
      await ctx.events.until('revalidated', n - 2);
      expect(ctx.server.requests).toHaveLength(n);
      expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', changeId: 'c2' });
    }
    expect(hints.published).toHaveLength(0);
  });

  test('malformed hints, another issuer\'s and uncached applications\' are ignored', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    ctx.clock.advance(P.minRefreshIntervalMs);
    for (const hint of [null, 'c2', { issuer: ISSUER, application: ctx.app }, { issuer: ISSUER, application: ctx.app, changeId: 2 },
      { issuer: ISSUER, application: ctx.app, changeId: '' }, { issuer: ISSUER, application: ctx.app, changeId: 'x'.repeat(1025) },
      { issuer: 'https://other.example/authentication/v1', application: ctx.app, changeId: 'c2' }, { issuer: ISSUER, application: 'other-app', changeId: 'c2' }]) {
      hints.deliver(hint);
    }
    expect(await authz.authorize(id, READ)).toMatchObject({ granted: true, changeId: 'c1' });
    await tick();
    expect(ctx.server.requests).toHaveLength(1);
  });

  test('a replica that fetches a new changeId publishes it once; the others revalidate and do not echo it', async () => {
    const hints = new MemoryHints();
    const a = await replica(hints);
    const b = await replica(hints);
    expect(ctx.server.requests).toHaveLength(2);
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    // A learns of the change by its denial refetch, and tells the fleet.
    expect(await a.authz.authorize(a.id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(hints.published).toEqual([{ issuer: ISSUER, application: ctx.app, changeId: 'c2' }]);
    await b.authz.authorize(b.id, READ);
    await ctx.events.until('changed', 2);
    expect(await b.authz.authorize(b.id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(4);
    expect(hints.published).toHaveLength(1);
  });

  test('while connected and the last hint named the changeId held, a denial does not refetch', async () => {
    const hints = new MemoryHints();
    const { authz, id } = await replica(hints);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c1' });
    ctx.clock.advance(P.minRefreshIntervalMs);
    for (let i = 0; i < 5; i++) expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: false, changeId: 'c1' });
    expect(ctx.server.requests).toHaveLength(1);
    // Disconnected: the channel may have missed a change, so the denial refetch is back.
    hints.connected = false;
    await authz.authorize(id, WRITE);
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('connected: false, or no hint yet: the denial refetch works as without a channel', async () => {
    const hints = new MemoryHints();
    hints.connected = false;
    const { authz, id } = await replica(hints);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c1' });
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
    expect(ctx.server.requests).toHaveLength(2);
  });

  test('a channel whose subscribe throws and publish rejects or throws: no unhandled rejection, decisions unchanged', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const hints of [
        { publish: () => Promise.reject(new Error('down')), subscribe: () => { throw new Error('down'); } },
        { publish: () => { throw new Error('down'); }, subscribe: () => () => { throw new Error('down'); } },
      ] as HintChannel[]) {
        ctx.server.policy = examplePolicy('c1', ctx.app);
        const start = ctx.server.requests.length;
        const { authz, id } = await replica(hints);
        ctx.server.policy = driverCanWrite('c2', ctx.app);
        ctx.clock.advance(P.minRefreshIntervalMs);
        expect(await authz.authorize(id, WRITE)).toMatchObject({ granted: true, changeId: 'c2' });
        expect(ctx.server.requests.length - start).toBe(2);
        await authz.close();
        ctx.clock.advance(P.minRefreshIntervalMs);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('with policyToken, a hint revalidates at once, without waiting for a request', async () => {
    const hints = new MemoryHints();
    await replica(hints);
    const svc = ctx.authorizer({ ...P, hints }, { policyToken: () => Promise.resolve(ctx.server.requests[0]!.headers.authorization!.slice(7)) });
    await svc.ready({ applications: [ctx.app] });
    const before = ctx.server.requests.length;
    ctx.server.policy = driverCanWrite('c2', ctx.app);
    ctx.clock.advance(P.minRefreshIntervalMs);
    hints.deliver({ issuer: ISSUER, application: ctx.app, changeId: 'c2' });
    await ctx.events.until('changed');
    expect(ctx.server.requests.length - before).toBe(1);
  });
});
