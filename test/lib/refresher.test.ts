/**
 * The refreshing primitive on a fake clock: jitter bounds over a simulated fleet, the backoff
 * sequence, `Retry-After` parsing, the spacing, single flight and the states. Every rule together,
 * over random options: test/property/freshness.property.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { MIN_BACKOFF_MS, Refresher, type FetchKind } from '../../src/lib/refresher.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryAfterMs } from '../../src/lib/retry-after.js';
import { Clock } from '../helpers/clock.js';
import { prng } from '../helpers/prng.js';


const TTL = 60_000;
const MIN = 5_000;

function fleet(clock: Clock, n: number): Refresher<number>[] {
  return Array.from({ length: n }, (_, i) => new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 300_000, timeoutMs: 5_000, now: clock.now, random: prng(i + 1) }));
}

/** Busiest bin over the mean bin, for event times in [from, from + bins × width). */
function peakOverMean(times: number[], from: number, width: number, bins: number): number {
  const counts = new Array<number>(bins).fill(0);
  for (const t of times) {
    const bin = Math.floor((t - from) / width);
    if (bin >= 0 && bin < bins) counts[bin]! += 1;
  }
  const total = counts.reduce((a, b) => a + b, 0);
  return Math.max(...counts) / (total / bins);
}

describe('jitter', () => {
  test('200 replicas started in one instant: refreshes spread, busiest tenth of a TTL ≤ 2× the mean, first refresh too', () => {
    const clock = new Clock(0);
    const replicas = fleet(clock, 200);
    for (const r of replicas) void r.start(async () => { r.succeeded(1); }, 'needed');
    const refreshes: number[] = [];
    const first = new Map<number, number>();
    // Steady traffic: every replica sees a request every 100 ms, for four TTLs.
    for (let t = 0; t <= 4 * TTL; t += 100) {
      clock.set(t);
      replicas.forEach((r, i) => {
        if (r.current() === undefined && r.start(async () => { r.succeeded(1); }, 'optional')) {
          refreshes.push(t);
          if (!first.has(i)) first.set(i, t);
        }
      });
    }
    expect(first.size).toBe(200);
    expect(peakOverMean([...first.values()], 0, TTL / 10, 10)).toBeLessThanOrEqual(2);
    expect(peakOverMean(refreshes, 0, TTL / 10, 40)).toBeLessThanOrEqual(2);
    // Later refreshes land in the last fifth of the freshness.
    const gaps = replicas.map((r) => r.status().nextRefreshAt! - (clock.now() - r.ageMs()!));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(0.8 * TTL);
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(TTL);
  });

  test('an unknown-kid refetch waits a random delay below 1 s: the busiest 100 ms holds at most half of 200 replicas', () => {
    const clock = new Clock(0);
    const delays = fleet(clock, 200).map((r) => r.spreadDelayMs());
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(0);
    for (const d of delays) expect(d).toBeLessThan(1_000);
    expect(peakOverMean(delays, 0, 100, 10) * 200 / 10).toBeLessThanOrEqual(100);
  });

  test('no random is drawn at construction', () => {
    let draws = 0;
    new Refresher({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 0, timeoutMs: 1, now: () => 0, random: () => { draws += 1; return 0.5; } });
    expect(draws).toBe(0);
  });
});

describe('a fleet on the fake clock (the bench:fleet settings)', () => {
  const POLICY_TTL = 3_000;
  const make = (clock: Clock, ttlMs: number, minRefreshIntervalMs: number, seed: number): Refresher<number> =>
    new Refresher<number>({ ttlMs, minRefreshIntervalMs, maxStaleMs: 300_000, timeoutMs: 5_000, now: clock.now, random: prng(seed) });

  test('a budget above a tenth of the TTL narrows the first-refresh window instead of piling draws onto the budget', () => {
    const clock = new Clock(0);
    const firsts: number[] = [];
    for (let i = 0; i < 200; i += 1) {
      const r = make(clock, POLICY_TTL, 1_000, i + 1);
      void r.start(async () => { r.succeeded(1); }, 'needed');
      firsts.push(r.status().nextRefreshAt!);
    }
    for (const t of firsts) expect(t).toBeGreaterThanOrEqual(1_000);
    const atTheBudget = firsts.filter((t) => t === 1_000).length;
    expect(atTheBudget).toBeLessThanOrEqual(2); // was 26 % of the fleet in one instant
    expect(peakOverMean(firsts, 1_000, 200, 10)).toBeLessThanOrEqual(2);
  });

  test('an outage answering 503 + Retry-After: 3 raises no cache\'s rate above its steady one; recovery is no burst', () => {
    const clock = new Clock(0);
    // Per replica: a policy (3 s TTL) and a JWKS (6 s TTL, whose steady cadence is slower than Retry-After).
    const caches = Array.from({ length: 200 }, (_, i) => [make(clock, POLICY_TTL, 250, 2 * i + 1), make(clock, 2 * POLICY_TTL, 1_000, 2 * i + 2)]).flat();
    const down = { from: 4 * POLICY_TTL, to: 6 * POLICY_TTL };
    const fetches: { t: number; cache: number }[] = [];
    for (const r of caches) void r.start(async () => { r.succeeded(1); }, 'needed');
    for (let t = 0; t < 8 * POLICY_TTL; t += 100) {
      clock.set(t);
      caches.forEach((r, cache) => {
        if (r.current() !== undefined || !r.mayStart('optional')) return;
        fetches.push({ t, cache });
        void r.start(async () => { if (t >= down.from && t < down.to) r.failed(new Error('503'), 3_000); else r.succeeded(1); }, 'optional');
      });
    }
    const count = (from: number, to: number, odd?: number): number => fetches.filter((f) => f.t >= from && f.t < to && (odd === undefined || f.cache % 2 === odd)).length;
    const steady = { from: POLICY_TTL, to: down.from };
    const rate = (w: { from: number; to: number }, odd?: number): number => count(w.from, w.to, odd) / (w.to - w.from);
    for (const kind of [0, 1]) expect(rate(down, kind)).toBeLessThanOrEqual(rate(steady, kind));
    for (let cache = 0; cache < caches.length; cache += 1) {
      const times = fetches.filter((f) => f.cache === cache && f.t >= down.from && f.t < down.to).map((f) => f.t);
      for (let j = 1; j < times.length; j += 1) expect(times[j]! - times[j - 1]!).toBeGreaterThanOrEqual(3_000);
    }
    const steadyPerTenth = (count(steady.from, steady.to) * POLICY_TTL) / 10 / (steady.to - steady.from);
    const recovery = fetches.filter((f) => f.t >= down.to && f.t < down.to + POLICY_TTL).map((f) => f.t);
    const counts = new Array<number>(10).fill(0);
    for (const t of recovery) counts[Math.floor((t - down.to) / (POLICY_TTL / 10))]! += 1;
    expect(Math.max(...counts)).toBeLessThanOrEqual(2 * steadyPerTenth);
  });
});

describe('backoff', () => {
  /** The waits (ms) a refresher sets after `n` failures in a row, each retried as soon as `kind` may. */
  function backoffGaps(r: Refresher<number>, clock: Clock, n: number, kind: FetchKind, retryAfter?: number): number[] {
    const gaps: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const at = clock.now();
      void r.start(async () => { r.failed(new Error('down'), retryAfter); }, kind);
      gaps.push(r.status().nextRefreshAt! - at);
      if (gaps[i]! > 0) expect(r.start(async () => 0, kind)).toBeUndefined(); // not before the backoff
      clock.set(r.status().nextRefreshAt!);
    }
    return gaps;
  }

  test('while a copy is served: the first retry no sooner than a healthy refresh (0.8 × ttlMs), growing (third gap ≥ 1.5× the first)', () => {
    for (let i = 0; i < 200; i += 1) {
      const clock = new Clock(0);
      // A long maxStaleMs: the copy's end does not cut the growth short here (see the next test).
      const replica = new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 3_600_000, timeoutMs: 5_000, now: clock.now, random: prng(i + 1) });
      void replica.start(async () => { replica.succeeded(1); }, 'needed');
      clock.set(TTL);
      const gaps = backoffGaps(replica, clock, 3, 'optional');
      expect(replica.state()).toBe('failing'); // serving the copy, no longer 'fresh'
      expect(gaps[0]).toBeGreaterThanOrEqual(0.8 * TTL);
      expect(gaps[0]).toBeLessThanOrEqual(1.6 * TTL);
      expect(gaps[1]).toBeGreaterThanOrEqual(gaps[0]!);
      expect(gaps[2]).toBeGreaterThanOrEqual(1.5 * gaps[0]!);
    }
  });

  test('while a copy is served: never a retry past the moment it stops being served; then a needed fetch at once', () => {
    const clock = new Clock(0);
    const r = new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 300_000, timeoutMs: 5_000, now: clock.now, random: () => 0.99 });
    void r.start(async () => { r.succeeded(1); }, 'needed');
    clock.set(TTL);
    const tries: number[] = [];
    while (clock.now() < TTL + 300_000) {
      void r.start(async () => { r.failed(new Error('down')); }, 'optional');
      tries.push(clock.now());
      clock.set(r.status().nextRefreshAt!);
    }
    expect(tries.length).toBeGreaterThan(2);
    expect(clock.now()).toBe(TTL + 300_000); // the last retry while the copy could still be served
    void r.start(async () => { r.failed(new Error('down')); }, 'optional');
    clock.advance(1);
    expect(r.usable()).toBeUndefined();
    // The copy is gone: the next caller needs a fetch, within the spacing of the last failure.
    clock.advance(MIN);
    expect(r.mayStart('needed')).toBe(true);
  });

  test('nothing usable: the first retry within minRefreshIntervalMs (never later), then from it doubling, at most 30 s', () => {
    for (let i = 0; i < 200; i += 1) {
      const clock = new Clock(0);
      const r = new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 300_000, timeoutMs: 5_000, now: clock.now, random: prng(i + 1) });
      const gaps = backoffGaps(r, clock, 8, 'needed');
      expect(r.state()).toBe('cold');
      expect(gaps[0]).toBeGreaterThanOrEqual(MIN / 2);
      expect(gaps[0]).toBeLessThanOrEqual(MIN);
      expect(gaps[1]).toBeGreaterThanOrEqual(MIN);
      expect(gaps[2]).toBeGreaterThanOrEqual(1.5 * gaps[0]!);
      for (const g of gaps) expect(g).toBeLessThanOrEqual(30_000);
      expect(r.status().consecutiveFailures).toBe(8);
    }
  });

  test('an explicit minRefreshIntervalMs: 50 is honoured: the first cold retry within 50 ms, no hidden floor', () => {
    for (let i = 0; i < 50; i += 1) {
      const clock = new Clock(0);
      const r = new Refresher<number>({ ttlMs: 100, minRefreshIntervalMs: 50, maxStaleMs: 800, timeoutMs: 5_000, now: clock.now, random: prng(i + 1) });
      const gaps = backoffGaps(r, clock, 2, 'needed');
      expect(gaps[0]).toBeLessThanOrEqual(50);
      expect(gaps[1]).toBeGreaterThanOrEqual(MIN_BACKOFF_MS); // the documented floor of later retries
    }
  });

  test('minRefreshIntervalMs 0: the first retry after a failed cold fetch on the next request, later ones from 1 s, growing', () => {
    for (const ttlMs of [1, 3_000, TTL]) {
      const clock = new Clock(0);
      const r = new Refresher<number>({ ttlMs, minRefreshIntervalMs: 0, maxStaleMs: 3_600_000, timeoutMs: 5_000, now: clock.now, random: prng(ttlMs) });
      clock.set(ttlMs);
      const gaps = backoffGaps(r, clock, 4, 'needed');
      expect(gaps[0]).toBe(0);
      expect(gaps[1]).toBeGreaterThanOrEqual(MIN_BACKOFF_MS);
      expect(gaps[3]).toBeGreaterThanOrEqual(1.5 * gaps[1]!);
    }
  });

  test('a Retry-After is a floor; a success resets the failures', () => {
    const clock = new Clock(0);
    const r = new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: 1_000, maxStaleMs: 300_000, timeoutMs: 5_000, now: clock.now, random: () => 0 });
    void r.start(async () => { r.failed(new Error('down'), 3_000); }, 'needed');
    expect(r.status()).toMatchObject({ state: 'cold', consecutiveFailures: 1, backoffMs: 3_000 });
    clock.set(2_999);
    expect(r.start(async () => 0, 'needed')).toBeUndefined(); // even a caller that needs it waits
    clock.set(3_000);
    void r.start(async () => { r.succeeded(7); }, 'needed');
    expect(r.status()).toMatchObject({ state: 'fresh', consecutiveFailures: 0, backoffMs: 0, ageMs: 0 });
  });
});

describe('the stale bound is absolute', () => {
  test('a spacing longer than ttlMs + maxStaleMs: the copy is not current past the bound, and then a needed fetch starts at once', () => {
    const clock = new Clock(0);
    const r = new Refresher<number>({ ttlMs: 100, minRefreshIntervalMs: 5_000, maxStaleMs: 800, timeoutMs: 5_000, now: clock.now, random: () => 0 });
    void r.start(async () => { r.succeeded(1); }, 'needed');
    clock.set(900);
    expect(r.current()).toBeUndefined();
    expect(r.usable()).toBe(1);
    expect(r.mayStart('optional')).toBe(false); // the spacing holds the revalidation back
    clock.set(901);
    expect(r.usable()).toBeUndefined();
    expect(r.mayStart('needed')).toBe(true); // but never a fetch needed to answer
  });
});

describe('Retry-After', () => {
  test('delay-seconds and HTTP-date; unreadable values ignored; capped at 10 min', () => {
    const now = Date.UTC(2026, 10, 21, 12, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    for (const bad of [undefined, '', '-1', '1.5', 'soon', '3s', '2026-11-21T12:00:05Z']) expect(parseRetryAfter(bad, now)).toBeUndefined();
    expect(retryAfterMs({ statusCode: 503, retryAfter: '3' }, now)).toBe(3_000);
    expect(retryAfterMs({ statusCode: 429, retryAfter: '3' }, now)).toBe(3_000);
    expect(retryAfterMs({ statusCode: 500, retryAfter: '3' }, now)).toBeUndefined();
  });
});

describe('budget and single flight', () => {
  test('one fetch at a time; no fetch that is not needed within minRefreshIntervalMs', async () => {
    const clock = new Clock(0);
    const r = new Refresher<number>({ ttlMs: TTL, minRefreshIntervalMs: MIN, maxStaleMs: 0, timeoutMs: 5_000, now: clock.now, random: () => 0 });
    let release!: () => void;
    const first = r.start(() => new Promise<void>((resolve) => { release = () => { r.succeeded(1); resolve(); }; }), 'needed');
    expect(r.start(async () => { throw new Error('a second fetch'); }, 'needed')).toBe(first);
    release();
    await first;
    clock.set(MIN - 1);
    expect(r.start(async () => 0, 'optional')).toBeUndefined();
    clock.set(MIN);
    expect(r.start(async () => { r.succeeded(2); }, 'optional')).toBeDefined();
    expect(r.value).toBe(2);
    // Past ttlMs + maxStaleMs nothing is usable.
    clock.set(MIN + TTL + 1);
    expect(r.usable()).toBeUndefined();
    expect(r.state()).toBe('cold');
  });
});
