/**
 * Heap after GC while 1,000,000 distinct-token authentications pass through `authenticate` with the
 * default options (issue #14 §6): the verified-token cache and the key cache must keep memory
 * bounded however many tokens a service sees.
 *
 * Signing a million RSA tokens would take a quarter of an hour, so `BENCH_HEAP_POOL` (default
 * 5,000) valid tokens are signed and cycled in order: the pool is five times the token cache's
 * default `max` (1,000), so under LRU every lookup misses and is verified and stored exactly as a
 * new token would be. Heap is read after a forced GC every 100,000 calls.
 *
 * Run: `npm run bench:heap` (about a minute). Flags: `--calls N`. Not a test: exit code 0.
 */
import { parseArgs } from 'node:util';
import { createAuthorizer } from '../../src/authorizer.js';
import { signJwt } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { BASE_URL, ISSUER, createFixture } from '../lib/fixture.js';
import { environmentLine } from '../lib/measure.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:heap)');
const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000000' } } });
const CALLS = Number(values.calls);
const POOL = Number(process.env.BENCH_HEAP_POOL ?? 5_000);

const fx = createFixture();
const nowSec = Math.floor(Date.now() / 1000);
const tokens = Array.from({ length: POOL }, (_, i) =>
  `Bearer ${signJwt(
    { jti: `heap-${i}`, iss: ISSUER, sub: `actor-${i}`, aud: 'tenant-1', tid: 'tenant-1', exp: nowSec + 86_400, iat: nowSec, acc: 'acc-1', app: 'app-1', ars: [{ r: ['DRIVER'], c: [`VIN=WVW${i}`] }] },
    fx.key,
    { cty: 't1' },
  )}`,
);

const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks });
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

console.log(environmentLine());
console.log(`${CALLS.toLocaleString('en-US')} authentications over ${POOL.toLocaleString('en-US')} distinct valid tokens (default options: token cache max 1,000)\n`);
const baseline = heapAfterGc();
console.log(`heap after GC before the first call: ${mib(baseline)} MiB`);
let warm = 0;
let peak = 0;
const started = Date.now();
for (let i = 0; i < CALLS; i++) {
  await authorizer.authenticate(tokens[i % POOL]);
  if ((i + 1) % 100_000 === 0 || i + 1 === CALLS) {
    const heap = heapAfterGc();
    if (warm === 0) warm = heap;
    peak = Math.max(peak, heap);
    console.log(`  after ${(i + 1).toLocaleString('en-US').padStart(9)} calls: ${mib(heap)} MiB`);
  }
}
const final = heapAfterGc();
console.log(`\nheap after GC: first sample ${mib(warm)} MiB, highest ${mib(peak)} MiB, last ${mib(final)} MiB; growth after the first sample ${mib(peak - warm)} MiB`);
console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s, ${Math.round(CALLS / ((Date.now() - started) / 1000)).toLocaleString('en-US')} authentications/s, one at a time)`);
await authorizer.close();
