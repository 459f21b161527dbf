/**
 * Token verification speed, all on one and the same RS256 token:
 *   1. raw `crypto.verify('sha256', …)` with a prebuilt KeyObject and pre-decoded bytes — the floor;
 *   2. `jose.jwtVerify` with a local key (jose's Node build verifies through WebCrypto) — a peer;
 *   3. `authorizer.authenticate()` with `tokenCache: false` — every call parses and RSA-verifies;
 *   4. `authorizer.authenticate()` answered from the verified-token cache.
 * Targets (issue #2, "Speed"): (3) ≥ 0.8 × (1), and (4) ≥ 500k ops/s.
 *
 * Run: `npm run bench` (= `node --import tsx bench/micro/verify.bench.ts`). Not a test: nothing is asserted,
 * the exit code is 0 whatever the numbers. Tune with BENCH_WARMUP_MS, BENCH_BATCHES, BENCH_BATCH_MS.
 */
import { verify } from 'node:crypto';
import { importJWK, jwtVerify } from 'jose';
import { createAuthorizer } from '../../src/authorizer.js';
import { BASE_URL, ISSUER, createFixture } from '../lib/fixture.js';
import { environmentLine, formatHeader, formatResult, measureInterleaved, type BenchCase, type MeasureResult } from '../lib/measure.js';
import { ratioOfMedians } from '../lib/stats.mjs';

const UNCACHED_TARGET_RATIO = 0.8;
const CACHE_HIT_TARGET_OPS = 500_000;

const fx = createFixture();
const joseKey = await importJWK(fx.key.jwk, 'RS256');
const uncached = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks, tokenCache: false });
const cached = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks });
await Promise.all([uncached.ready(), cached.ready()]);

// Every case must succeed on the token before it is timed (measure() also calls each once up front).
if (!verify('sha256', fx.signingInput, fx.publicKey, fx.signature)) throw new Error('raw verify failed');
const expected = (await uncached.authenticate(fx.authorization)).claims.sub;
if ((await jwtVerify(fx.token, joseKey, { issuer: ISSUER })).payload.sub !== expected) throw new Error('jose verify failed');
if ((await cached.authenticate(fx.authorization)).claims.sub !== expected) throw new Error('cached authenticate failed');

const cases: BenchCase[] = [
  { name: 'raw crypto.verify RS256 (floor)', fn: () => verify('sha256', fx.signingInput, fx.publicKey, fx.signature) },
  { name: 'jose.jwtVerify, local key (peer)', fn: () => jwtVerify(fx.token, joseKey, { issuer: ISSUER, algorithms: ['RS256'] }) },
  { name: 'authenticate, uncached (tokenCache: false)', fn: () => uncached.authenticate(fx.authorization) },
  { name: 'authenticate, cache hit', fn: () => cached.authenticate(fx.authorization) },
];

console.log(environmentLine());
console.log(`token: ${fx.token.length} chars, RSA 2048, one key in a static JWKS; batches interleaved across cases\n`);
console.log(formatHeader());
const results = await measureInterleaved(cases);
for (const result of results) console.log(formatResult(result));
const [raw, jose, miss, hit] = results as [MeasureResult, MeasureResult, MeasureResult, MeasureResult];

const ratio = ratioOfMedians(miss.batchOpsPerSec, raw.batchOpsPerSec);
const cpuRatio = ratioOfMedians(miss.batchOpsPerCpuSec, raw.batchOpsPerCpuSec);
const mark = (ok: boolean): string => (ok ? 'ok' : 'BELOW TARGET');
console.log('');
console.log(
  `uncached authenticate / raw crypto.verify = ${ratio.toFixed(2)}×  (per CPU-s: ${cpuRatio.toFixed(2)}×; target ≥ ${UNCACHED_TARGET_RATIO}×)  ${mark(ratio >= UNCACHED_TARGET_RATIO)}`,
);
console.log(`jose.jwtVerify / raw crypto.verify        = ${ratioOfMedians(jose.batchOpsPerSec, raw.batchOpsPerSec).toFixed(2)}×  (per CPU-s: ${ratioOfMedians(jose.batchOpsPerCpuSec, raw.batchOpsPerCpuSec).toFixed(2)}×)`);
console.log(
  `cache-hit authenticate                    = ${Math.round(hit.opsPerSec).toLocaleString('en-US')} ops/s  (target ≥ ${CACHE_HIT_TARGET_OPS.toLocaleString('en-US')})  ${mark(hit.opsPerSec >= CACHE_HIT_TARGET_OPS)}`,
);

await Promise.all([uncached.close(), cached.close()]);
