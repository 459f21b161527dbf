/**
 * The default dispatcher keeps idle connections past the refresh cadence: against a server that
 * keeps idle connections and advertises no timeout, ≥ 90% of steady-state refreshes reuse a socket.
 * undici's idle timers run on `setTimeout`, faked here, so that idle time passes without waiting.
 */
import type { Socket } from 'node:net';
import { afterEach, expect, test, vi } from 'vitest';
import type { AuthorizerStatus } from '../../src/authorizer-types.js';
import { keepAliveOptions } from '../../src/lib/undici.js';
import { useIam } from '../helpers/index.js';

const TTL = 5_000;
const iam = useIam();
afterEach(() => { vi.useRealTimers(); });

/** Lets real I/O run (setImmediate is not faked) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 5_000 && !done(); i++) {
    vi.advanceTimersByTime(0); // timers of 0 ms (undici defers some work to them)
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(done()).toBe(true);
}

/** No fetch running: every cache has a next refresh time. */
function settled(status: AuthorizerStatus): boolean {
  const all = [...Object.values(status.issuers), ...Object.values(status.applications).flatMap((apps) => Object.values(apps))];
  return all.every((s) => s.nextRefreshAt !== null);
}

test('≥ 90% of steady-state refreshes reuse a connection; the pool is bounded per origin', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  // Keeps idle connections, and sends no `Keep-Alive: timeout=` hint.
  iam.server.keepAliveTimeout = 0;
  let open = 0;
  let mostOpen = 0;
  iam.server.on('connection', (socket: Socket) => {
    mostOpen = Math.max(mostOpen, ++open);
    socket.on('close', () => open--);
  });
  const { clock } = iam;
  const cache = { ttlMs: TTL, minRefreshIntervalMs: 1_000, timeoutMs: 2_000 };
  const authz = iam.authorizer({ jwks: cache, policy: cache });
  const header = iam.bearer({ exp: clock.sec + 3_600 });
  const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };
  await authz.check(header, query);
  let warm = 0;
  for (let round = 0; round < 24; round++) {
    // The first round fills the pool (both caches refresh at once); the rest is steady state.
    if (round === 1) warm = iam.requests.length;
    // A refresh cadence of idle time, then a request that finds both caches due.
    vi.advanceTimersByTime(TTL);
    clock.advance(TTL);
    const before = iam.requests.length;
    await authz.check(header, query);
    await until(() => iam.requests.length >= before + 2 && settled(authz.status()));
  }
  const steady = iam.requests.slice(warm);
  expect(steady.length).toBeGreaterThanOrEqual(40);
  const seen = new Set<Socket>(iam.requests.slice(0, warm).map((r) => r.socket));
  let reused = 0;
  for (const r of steady) {
    if (seen.has(r.socket)) reused++;
    seen.add(r.socket);
  }
  // A round that starts while the last one's sockets are being handed back opens a connection:
  // that is the 10% allowed; without keep-alive past the TTL, none would be reused.
  expect(reused / steady.length).toBeGreaterThanOrEqual(0.9);
  expect(mostOpen).toBeLessThanOrEqual(4);
});

test('the keep-alive covers the TTL plus a margin, within [4 s, 10 min], 4 connections per origin', () => {
  expect(keepAliveOptions(0)).toEqual({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 4 });
  expect(keepAliveOptions(60_000).keepAliveTimeout).toBe(90_000);
  expect(keepAliveOptions(3_600_000).keepAliveTimeout).toBe(600_000);
});
