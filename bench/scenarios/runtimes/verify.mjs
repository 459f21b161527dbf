/* global crypto, performance, console, process, Buffer -- a plain script for Node, Bun and Deno alike (see eslint.config.js, test/runtimes) */
/**
 * RS256 verifications per second on the runtime that runs this file (Node.js, Bun, Deno), through
 * the public API of the built package (iam-authz, imported by name) and, in the same run, the raw
 * ceilings: one `crypto.verify` (node:crypto, the path the library takes for RS* on every runtime)
 * and one `crypto.subtle.verify` (WebCrypto, the path it takes for PS* on workerd only).
 *
 *   npm run bench:runtimes          # node, then bun and deno from $IAM_AUTHZ_CI_CACHE (.ci/lib.sh)
 *   node bench/scenarios/runtimes/verify.mjs  # or: bun … / deno run -A …
 *
 * Plain JavaScript, so every runtime runs it as it is (the TypeScript harness in bench/lib needs a
 * loader on Node). One token (RS256, RSA 2048, the claims of bench/lib/fixture.ts), a static JWKS
 * (`localJwks`, no network), `tokenCache: false`: every call parses and RSA-verifies. Calls are
 * awaited one by one; the cases' batches are interleaved so load from elsewhere hits them alike.
 * Prints numbers, never fails on them. BENCH_BATCHES (default 8) × BENCH_BATCH_MS (default 200).
 */
import { createPublicKey, verify } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { createAuthorizer } from 'iam-authz';
import { BASE_URL, benchKeyAndToken } from './token.mjs';
import { median, ratioOfMedians, summarize } from '../../lib/stats.mjs';

/** @type {any} */
const host = globalThis;
const runtime = host.Bun ? `bun ${host.Bun.version}` : host.Deno ? `deno ${host.Deno.version.deno}` : `node ${process.version}`;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 8);
const BATCH_MS = Number(process.env.BENCH_BATCH_MS ?? 200);

const { key, token } = benchKeyAndToken();
const lastDot = token.lastIndexOf('.');
const signingInput = Buffer.from(token.slice(0, lastDot), 'latin1');
const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
const publicKey = createPublicKey({ key: /** @type {any} */ (key.jwk), format: 'jwk' });
const webKey = await crypto.subtle.importKey('jwk', /** @type {any} */ (key.jwk), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: /** @type {any} */ ({ keys: [key.jwk] }), tokenCache: false });
const authorization = `Bearer ${token}`;

/** @type {{ name: string, fn: () => unknown, rates: number[], cpuRates: number[] }[]} */
const cases = [
  { name: 'authenticate, uncached (public API; RS256 through node:crypto)', fn: () => authorizer.authenticate(authorization), rates: [], cpuRates: [] },
  { name: 'raw node:crypto verify RS256 (ceiling)', fn: () => verify('sha256', signingInput, publicKey, signature), rates: [], cpuRates: [] },
  { name: 'raw WebCrypto subtle.verify RS256', fn: () => crypto.subtle.verify('RSASSA-PKCS1-v1_5', webKey, signature, signingInput), rates: [], cpuRates: [] },
];
for (const c of cases) {
  // Each case must verify before it is timed: a rate of failures would be meaningless.
  const ok = await c.fn();
  if (!(ok === true || /** @type {any} */ (ok)?.claims?.sub === 'actor-alice')) throw new Error(`${c.name}: the token did not verify`);
}

/**
 * Calls `fn` (awaited one by one) for `ms`; returns calls per second of wall clock and per second of
 * this process's CPU time (all threads: WebCrypto's pool too), which moves less when other
 * processes load the machine. @param {() => unknown} fn @param {number} ms
 */
async function rate(fn, ms) {
  let calls = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 16; i++) await fn();
    calls += 16;
    elapsed = performance.now() - start;
  }
  const used = process.cpuUsage(cpu);
  return { wall: (calls * 1000) / elapsed, cpu: (calls * 1e6) / Math.max(1, used.user + used.system) };
}

console.log(`${runtime}, ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${BATCHES} interleaved batches of ${BATCH_MS} ms after a warm-up`);
for (const c of cases) await rate(c.fn, 300);
for (let b = 0; b < BATCHES; b++) {
  for (const c of cases) {
    const { wall, cpu } = await rate(c.fn, BATCH_MS);
    c.rates.push(wall);
    c.cpuRates.push(cpu);
  }
}
const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US').padStart(8);
console.log(`  ${'case'.padEnd(64)} verifications/s (batches min–max)  per CPU-s`);
for (const c of cases) {
  const t = summarize(c.rates);
  console.log(`  ${c.name.padEnd(64)} ${fmt(t.median)} (${Math.round(t.min)}–${Math.round(t.max)})  ${fmt(median(c.cpuRates))}`);
}
const ratio = (/** @type {'rates' | 'cpuRates'} */ k, /** @type {number} */ a, /** @type {number} */ b) => ratioOfMedians(cases[a]?.[k] ?? [], cases[b]?.[k] ?? []).toFixed(2);
console.log(`  authenticate / raw node:crypto ${ratio('rates', 0, 1)}× (per CPU-s ${ratio('cpuRates', 0, 1)}×); raw WebCrypto / raw node:crypto ${ratio('rates', 2, 1)}× (per CPU-s ${ratio('cpuRates', 2, 1)}×)`);
await authorizer.close();
