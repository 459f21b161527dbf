/**
 * RSA verification on the event loop vs in libuv's thread pool (issue #14 §3), without HTTP:
 * how many RS256 verifications per second one process completes when each is
 *   - `inline`: `crypto.verify(…)` on the main thread (the one-thread floor);
 *   - `pool ×N`: `crypto.verify(…, callback)` with N verifications in flight (libuv's pool runs
 *     them; the main thread only queues and collects);
 *   - `hybrid ×N`: the pool while fewer than N are in flight there, else inline at once — what
 *     `verify: 'auto'` does.
 * Work arrives as a closed loop of `CONCURRENCY` logical callers (like HTTP connections), each
 * starting its next verification when the previous one settles. Rounds are interleaved; median
 * and min–max per mode; also the main thread's share of the CPU (a main thread that is free can
 * serve requests meanwhile).
 *
 * Run: `npm run bench:rsa-pool` (UV_THREADPOOL_SIZE is read by libuv at start: set it in the
 * environment, e.g. `UV_THREADPOOL_SIZE=2 npm run bench:rsa-pool`). Not a test: exit code 0.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { verify } from 'node:crypto';
import { createFixture } from '../lib/fixture.js';
import { environmentLine } from '../lib/measure.js';
import { median, ratioOfMedians, summarize } from '../lib/stats.mjs';

const fx = createFixture();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

type Verify = () => Promise<boolean> | boolean;

const inline: Verify = () => verify('sha256', fx.signingInput, fx.publicKey, fx.signature);
const pooled: Verify = () => new Promise((resolve, reject) => {
  verify('sha256', fx.signingInput, fx.publicKey, fx.signature, (error, ok) => { if (error) reject(error); else resolve(ok); });
});

/** Pool while fewer than `limit` are in flight there; inline otherwise. */
function hybrid(limit: number): Verify {
  let inFlight = 0;
  return () => {
    if (inFlight >= limit) return inline();
    inFlight++;
    return new Promise((resolve, reject) => {
      verify('sha256', fx.signingInput, fx.publicKey, fx.signature, (error, ok) => {
        inFlight--;
        if (error) reject(error); else resolve(ok);
      });
    });
  };
}

/** `limit` logical callers in a closed loop; each awaits its verification (sync results too). */
async function run(fn: Verify, callers: number, ms: number): Promise<{ rate: number; mainCpuShare: number }> {
  let done = 0;
  const end = performance.now() + ms;
  const elu = performance.eventLoopUtilization();
  const start = performance.now();
  await Promise.all(Array.from({ length: callers }, async () => {
    while (performance.now() < end) {
      const ok = fn();
      if (!(ok instanceof Promise ? await ok : ok)) throw new Error('signature did not verify');
      done++;
      // Inline results still go back to the event loop, as a request handler does between
      // requests (a microtask would starve the pool's completions, which are macrotasks).
      if (!(ok instanceof Promise)) await new Promise(setImmediate);
    }
  }));
  const elapsed = performance.now() - start;
  return { rate: (done * 1000) / elapsed, mainCpuShare: performance.eventLoopUtilization(elu).utilization };
}

const modes: [string, Verify, number][] = [
  ['inline', inline, CONCURRENCY],
  ['pool ×1 (one at a time)', pooled, 1],
  ['pool ×2', pooled, 2],
  ['pool ×4', pooled, 4],
  [`pool ×${CONCURRENCY}`, pooled, CONCURRENCY],
  ['hybrid ×2', hybrid(2), CONCURRENCY],
  ['hybrid ×4', hybrid(4), CONCURRENCY],
];
const rates = new Map<string, number[]>(modes.map(([name]) => [name, []]));
const shares = new Map<string, number[]>(modes.map(([name]) => [name, []]));
for (const [, fn, callers] of modes) await run(fn, callers, 200); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn, callers] of modes) {
    const { rate, mainCpuShare } = await run(fn, callers, ROUND_MS);
    rates.get(name)!.push(rate);
    shares.get(name)!.push(mainCpuShare);
  }
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
console.log(environmentLine());
console.log(`UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '(default 4)'}, ${availableParallelism()} CPUs, ${CONCURRENCY} callers, ${ROUNDS} interleaved rounds of ${ROUND_MS} ms\n`);
console.log(`${'mode'.padEnd(26)} ${'verify/s'.padStart(9)}   ${'min–max'.padEnd(15)} ${'× inline'.padStart(8)}  event-loop busy`);
const floor = rates.get('inline')!;
for (const [name] of modes) {
  const xs = rates.get(name)!;
  const t = summarize(xs);
  console.log(`${name.padEnd(26)} ${int.format(t.median).padStart(9)}   ${`${int.format(t.min)}–${int.format(t.max)}`.padEnd(15)} ${ratioOfMedians(xs, floor).toFixed(2).padStart(8)}  ${(median(shares.get(name)!) * 100).toFixed(0)}%`);
}
