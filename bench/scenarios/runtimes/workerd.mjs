// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- run as is by Node 24, not compiled
// @ts-nocheck -- a plain Node 24 script (wrangler and miniflare need Node >= 22); run.sh runs it.
/* global performance, console, process -- a plain Node script (see verify.mjs) */
/**
 * verify.mjs's three cases in Cloudflare Workers: worker.mjs bundled by wrangler and run in workerd
 * by miniflare, as the workerd suite does (test/runtimes/workers/bundle.mjs). workerd's clock
 * stands still while code runs (it moves only at I/O), so a Worker cannot time its own loop: this
 * driver times each `GET /bench?case=<a|b|c>&n=<N>` with performance.now() and takes off the round
 * trip of an empty request (n=0, timed here too). The cases are interleaved over the rounds. No
 * per-CPU-s column: workerd runs in miniflare's child process, whose CPU time is not read here.
 *
 * Usage: node run.mjs <folder holding node_modules/wrangler and node_modules/miniflare>
 * BENCH_ROUNDS (default 8) × BENCH_N verifications per request (default 6000, so the round trip stays under
 * about 2 % of a request on a 2-vCPU VM). Prints numbers,
 * never fails on them.
 */
import { rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchKeyAndToken } from './token.mjs';
import { median, ratioOfMedians, summarize } from '../../lib/stats.mjs';
import { bundleWorker, startWorker, workerTools } from '../../../test/runtimes/workers/bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const [tools] = process.argv.slice(2);
if (!tools) throw new Error('usage: node workerd.mjs <folder with wrangler and miniflare installed>');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const N = Number(process.env.BENCH_N ?? 6000);

const { key, token } = benchKeyAndToken();

const { Miniflare, wrangler } = await workerTools(tools);
const wranglerVersion = (await import(join(tools, 'node_modules/wrangler/package.json'), { with: { type: 'json' } })).default.version;
const bundled = bundleWorker({
  wrangler, dir: '.',
  files: { 'worker.mjs': join(here, 'worker.mjs'), 'wrangler.jsonc': join(here, 'wrangler.jsonc') },
  defines: { BENCH_JWK: JSON.stringify(key.jwk), BENCH_TOKEN: JSON.stringify(token) },
});
let mf;
try {
  if (!bundled.ok) throw new Error(`wrangler did not bundle the Worker:\n${bundled.output}`);
  mf = startWorker(Miniflare, bundled.work);
  /** Milliseconds for one request running `n` verifications of case `c`. */
  const timed = async (/** @type {string} */ c, /** @type {number} */ n) => {
    const start = performance.now();
    const response = await mf.dispatchFetch(`http://localhost/bench?case=${c}&n=${n}`);
    const body = await response.json();
    const ms = performance.now() - start;
    // Each case must verify: a rate of failures would be meaningless.
    if (!body.ok) throw new Error(`case ${c}: the token did not verify in workerd`);
    return ms;
  };
  const cases = [
    { id: 'a', name: 'authenticate, uncached (public API; RS256 through node:crypto)', rates: [] },
    { id: 'b', name: 'raw node:crypto verify RS256 (ceiling)', rates: [] },
    { id: 'c', name: 'raw WebCrypto subtle.verify RS256', rates: [] },
  ];
  // Warm-up: each case, then the empty round trip.
  for (const c of cases) await timed(c.id, Math.min(N, 500));
  const empty = [];
  for (let i = 0; i < 50; i++) empty.push(await timed('a', 0));

  console.log(`workerd (miniflare, wrangler ${wranglerVersion}; driver Node ${process.version}), ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${ROUNDS} interleaved rounds of one request × ${N} verifications per case after a warm-up`);
  const rtts = [];
  for (let r = 0; r < ROUNDS; r++) {
    const rtt = median([await timed('a', 0), await timed('a', 0), await timed('a', 0)]);
    rtts.push(rtt);
    for (const c of cases) c.rates.push((N * 1000) / Math.max(0.001, (await timed(c.id, N)) - rtt));
  }
  const rtt = median([...empty, ...rtts]);
  console.log(`  empty-request round trip ${rtt.toFixed(3)} ms (median; taken off each timed request)`);
  const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US').padStart(8);
  console.log(`  ${'case'.padEnd(64)} verifications/s (rounds min–max)  per CPU-s: not read (workerd is miniflare's child process)`);
  for (const c of cases) {
    const t = summarize(c.rates);
    const ms = (N * 1000) / t.median;
    console.log(`  ${c.name.padEnd(64)} ${fmt(t.median)} (${Math.round(t.min)}–${Math.round(t.max)})  round trip ${((rtt / ms) * 100).toFixed(2)} % of a request`);
  }
  const ratio = (/** @type {number} */ a, /** @type {number} */ b) => ratioOfMedians(cases[a].rates, cases[b].rates).toFixed(2);
  console.log(`  authenticate / raw node:crypto ${ratio(0, 1)}×; raw WebCrypto / raw node:crypto ${ratio(2, 1)}×`);
} finally {
  await mf?.dispose().catch(() => undefined);
  rmSync(bundled.work, { recursive: true, force: true });
}
