/**
 * What 100,000 open watches (`authorizer.watch`) cost on one authorizer, and what the revocation
 * list costs a cached `authenticate` (issue #36):
 *   1. heap and RSS per open watch (after a forced GC, beyond the identities the caller holds);
 *   2. time to open them (one at a time, each decided first) and to `close()` them all;
 *   3. CPU while nothing changes (`process.cpuUsage` over an idle window, next to the same window
 *      with no watch open): one unref'd timer per authorizer, so it should be about nothing;
 *   4. time from a policy change that removes the permission (the policy server changes, a hint
 *      arrives, a request refetches) until every watch has aborted (an `abort` listener on each);
 *   5. `authenticate` of a cached token with an empty revocation list and with 100,000 entries
 *      (50,000 by `jti`, 50,000 by `sub`, none matching), each as a multiple of a raw RSA verify
 *      measured in the same rounds (the work the cache saves: `bench:ceiling`'s figure 4 uses the
 *      same ceiling), and full / empty round by round.
 *
 * Real keys and tokens: `BENCH_WATCHES` (100,000) distinct RS256 tokens (one `sub`, `jti` and VIN
 * each), signed by two worker threads, verified by `authenticate` against a static JWKS; the policy
 * comes from a loopback HTTP server, hints over an in-memory channel. Runs 1–4 `BENCH_RUNS` (3)
 * times, the order of abort and close alternating; `BENCH_IDLE_MS` (3,000) per idle window.
 *
 * Run: `npm run bench:watches` (under a minute on 2 cores). Not a test: exit code 0.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from 'node:crypto';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, signingKeyFromJwk, signJwt, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { BASE_URL, ISSUER } from '../lib/fixture.js';

interface SignJob { key: SigningKey; from: number; to: number; nowSec: number }

/**
 * `n` tokens and their key. Signing 100,000 RSA tokens takes 15–50 s on two shared cores, more than
 * the rest of the run: they are kept in the temp directory and reused for 12 h (they live 24 h);
 * `BENCH_FRESH_TOKENS=1` signs anew. Only a throwaway bench key is written there.
 */
async function tokensFor(n: number): Promise<{ key: SigningKey; nowSec: number; tokens: string[]; reused: boolean }> {
  const file = join(tmpdir(), `iam-authz-bench-watches-${n}.json`);
  const now = Math.floor(Date.now() / 1000);
  if (process.env.BENCH_FRESH_TOKENS !== '1') {
    try {
      const kept = JSON.parse(readFileSync(file, 'utf8')) as { privateJwk: Record<string, unknown>; nowSec: number; tokens: string[] };
      if (kept.tokens.length === n && kept.nowSec > now - 12 * 3600 && kept.nowSec <= now) return { key: signingKeyFromJwk(kept.privateJwk), nowSec: kept.nowSec, tokens: kept.tokens, reused: true };
    } catch {
      // None kept, or unreadable: sign anew.
    }
  }
  const key = generateSigningKey({ kid: 'bench-watches' });
  const half = Math.ceil(n / 2);
  const parts = await Promise.all(([[0, half], [half, n]] as const).map(([from, to]) => new Promise<string[]>((resolve, reject) => {
    // A worker does not inherit tsx's hooks on Node 20: it registers them, then loads this file.
    const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
    const worker = new Worker(boot, { eval: true, workerData: { key, from, to, nowSec: now } satisfies SignJob });
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  const tokens = parts.flat().map((t) => `Bearer ${t}`);
  const privateJwk = { ...key.privateKey.export({ format: 'jwk' }), kid: key.kid };
  writeFileSync(file, JSON.stringify({ privateJwk, nowSec: now, tokens }), { mode: 0o600 });
  return { key, nowSec: now, tokens, reused: false };
}

function claimsOf(i: number, nowSec: number): Record<string, unknown> {
  return { jti: `w-${i}`, iss: ISSUER, sub: `actor-${i}`, aud: 'tenant-1', tid: 'tenant-1', exp: nowSec + 86_400, iat: nowSec, acc: 'acc-1', app: 'app-1', ars: [{ r: ['DRIVER'], c: [`VIN=WVW${i}`] }] };
}

if (!isMainThread) {
  // Worker: sign tokens [from, to) and send them back.
  const { key, from, to, nowSec } = workerData as SignJob;
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(signJwt(claimsOf(i, nowSec), key, { cty: 't1' }));
  parentPort!.postMessage(out);
} else {
  await main();
}

async function main(): Promise<void> {
  const { createAuthorizer } = await import('../../src/authorizer.js');
  const { environmentLine, formatHeader, formatResult, measureInterleaved } = await import('../lib/measure.js');
  const { median, pairedRatios, spread } = await import('../lib/stats.mjs');
  type Hint = Parameters<import('../../src/policy/hints.js').HintChannel['publish']>[0];
  type Identity = Awaited<ReturnType<import('../../src/authorizer-types.js').Authorizer['authenticate']>>;
  type Watch = import('../../src/watch/watcher.js').Watch;

  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:watches)');
  const N = Number(process.env.BENCH_WATCHES ?? 100_000);
  const RUNS = Number(process.env.BENCH_RUNS ?? 3);
  const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 3_000);
  const started = performance.now();
  const fmt = (x: number, digits = 0): string => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const heapAfterGc = (): { heap: number; rss: number } => {
    gc();
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    return { heap: heapUsed, rss };
  };
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  // ---- Tokens: N distinct ones, signed on two threads, kept for 12 h in the temp directory. ----
  const { key, tokens, reused } = await tokensFor(N);
  const jwks = { keys: [key.jwk] };
  const signedMs = performance.now() - started;

  // ---- The IAM's policy API on loopback: v1 grants DRIVER vehicle-service READ, v2 takes it away. ----
  const policyOf = (changeId: string, permissions: string[]): string => JSON.stringify({
    applicationId: 'app-1',
    changeId,
    roles: [{ key: 'DRIVER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: permissions.map((key) => ({ key })) }] }],
  });
  let version = 1;
  let served = { changeId: 'v1', body: policyOf('v1', ['READ', 'WRITE']) };
  const serve = (granting: boolean): void => {
    version += 1;
    const changeId = `v${version}`;
    served = { changeId, body: policyOf(changeId, granting ? ['READ', 'WRITE'] : ['WRITE']) };
  };
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', etag: `"${served.changeId}"` }).end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const policyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy/v1/roles`;

  // An in-memory hint channel (as bench:fleet's), so that a policy change arrives as it would over Redis.
  const listeners = new Set<(hint: Hint) => void>();
  const hints = {
    publish(hint: Hint) {
      queueMicrotask(() => { for (const l of listeners) l(hint); });
      return Promise.resolve();
    },
    subscribe(listener: (hint: Hint) => void) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
  };

  const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: jwks, policyUrl, policy: { ttlMs: 3_600_000, maxStaleMs: 3_600_000, minRefreshIntervalMs: 100, hints } });
  const queryOf = (i: number) => ({ service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: `WVW${i}` } });
  const queries = Array.from({ length: N }, (_, i) => queryOf(i));
  const identities: Identity[] = new Array<Identity>(N);
  const authStarted = performance.now();
  for (let i = 0; i < N; i++) identities[i] = await authorizer.authenticate(tokens[i]);
  const authMs = performance.now() - authStarted;
  if (new Set(identities.map((id) => id.claims.sub)).size !== N) throw new Error('the subjects are not distinct');
  if (!(await authorizer.authorize(identities[0]!, queries[0]!)).granted) throw new Error('v1 does not grant');

  /**
   * Publishes a policy change; a request then finds the policy due and revalidates it in the
   * background (answering from the policy held meanwhile). Resolves once a request sees the change.
   * The caller leaves `minRefreshIntervalMs` since the last fetch first.
   */
  async function changePolicy(granting: boolean): Promise<void> {
    serve(granting);
    await hints.publish({ issuer: ISSUER, application: 'app-1', changeId: served.changeId });
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline) {
      await sleep(1); // not a busy loop: the CPU of this phase is measured
      if ((await authorizer.authorize(identities[0]!, queries[0]!)).granted === granting) return;
    }
    throw new Error(`policy ${served.changeId} not taken in within 10 s`);
  }

  /** Wall and CPU time (ms) since `since()` was called. */
  function since(): () => { ms: number; cpuMs: number } {
    const t = performance.now();
    const cpu = process.cpuUsage();
    return () => {
      const { user, system } = process.cpuUsage(cpu);
      return { ms: performance.now() - t, cpuMs: (user + system) / 1000 };
    };
  }

  async function openAll(): Promise<{ watches: Watch[]; took: { ms: number; cpuMs: number } }> {
    const watches: Watch[] = new Array<Watch>(N);
    const elapsed = since();
    for (let i = 0; i < N; i++) watches[i] = await authorizer.watch(identities[i]!, queries[i]!);
    const took = elapsed();
    if (authorizer.status().watches.open !== N) throw new Error(`open watches: ${authorizer.status().watches.open}, expected ${N}`);
    return { watches, took };
  }

  function closeAll(watches: Watch[]): { ms: number; cpuMs: number } {
    const elapsed = since();
    for (const w of watches) w.close();
    const took = elapsed();
    if (authorizer.status().watches.open !== 0) throw new Error('watches left open after close()');
    if (watches.some((w) => w.signal.aborted)) throw new Error('a closed watch aborted');
    return took;
  }

  /** From the policy change (server, hint, one request) until every watch's abort listener ran. */
  async function abortAll(watches: Watch[]): Promise<{ ms: number; cpuMs: number }> {
    let aborted = 0;
    let done!: () => void;
    const all = new Promise<void>((resolve) => { done = resolve; });
    for (const w of watches) {
      w.signal.addEventListener('abort', () => {
        if ((w.signal.reason as { code?: string }).code !== 'ERR_PERMISSION_DENIED') throw new Error(`aborted with ${String((w.signal.reason as { code?: string }).code)}`);
        if (++aborted === N) done();
      }, { once: true });
    }
    await sleep(150); // past minRefreshIntervalMs since the last fetch
    const elapsed = since();
    await changePolicy(false);
    await Promise.race([all, sleep(30_000).then(() => { throw new Error(`${aborted} of ${N} watches aborted in 30 s`); })]);
    const took = elapsed();
    if (authorizer.status().watches.open !== 0) throw new Error('watches left open after the abort');
    return took;
  }

  async function idleCpu(ms: number): Promise<number> {
    // Settle: what the last step left to the collector and the compiler is not idle work.
    heapAfterGc();
    await sleep(500);
    const before = process.cpuUsage();
    await sleep(ms);
    const { user, system } = process.cpuUsage(before);
    return (user + system) / (ms / 1000); // µs of CPU per second
  }

  console.log(environmentLine());
  console.log(`${fmt(N)} distinct RS256 tokens ${reused ? 'read from the temp directory' : 'signed on 2 threads'} in ${fmt(signedMs / 1000, 1)} s, authenticated in ${fmt(authMs / 1000, 1)} s; ${RUNS} runs, idle windows of ${fmt(IDLE_MS)} ms\n`);

  const heapPerWatch: number[] = [];
  const rssPerWatch: number[] = [];
  const heapLeft: number[] = [];
  type Took = { ms: number; cpuMs: number };
  const open: Took[] = [];
  const closed: Took[] = [];
  const aborted: Took[] = [];
  const idleWith: number[] = [];
  const idleWithout: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const base = heapAfterGc();
    idleWithout.push(await idleCpu(Math.max(1_000, IDLE_MS / 3)));
    let opened = await openAll();
    open.push(opened.took);
    const full = heapAfterGc();
    heapPerWatch.push((full.heap - base.heap) / N);
    rssPerWatch.push((full.rss - base.rss) / N);
    idleWith.push(await idleCpu(IDLE_MS));
    if (run % 2 === 0) {
      closed.push(closeAll(opened.watches));
      opened = await openAll();
      open.push(opened.took);
      aborted.push(await abortAll(opened.watches));
      await sleep(150);
      await changePolicy(true);
    } else {
      aborted.push(await abortAll(opened.watches));
      await sleep(150);
      await changePolicy(true);
      opened = await openAll();
      open.push(opened.took);
      closed.push(closeAll(opened.watches));
    }
    opened.watches.length = 0;
    heapLeft.push((heapAfterGc().heap - base.heap) / N);
  }

  const row = (label: string, value: string): void => { console.log(`${label.padEnd(52)} ${value}`); };
  console.log(`median (min–max) over ${RUNS} runs; ${fmt(N)} watches, one per token\n`);
  row('heap per open watch (bytes, after GC)', spread(heapPerWatch));
  row('RSS per open watch (bytes)', spread(rssPerWatch));
  row('heap per watch left after all closed or aborted', spread(heapLeft));
  const times = (label: string, took: Took[], what: string): void => {
    const ms = took.map((t) => t.ms);
    const cpu = took.map((t) => t.cpuMs);
    row(`${label}, wall ms`, `${spread(ms)}  = ${fmt(median(ms) * 1e6 / N)} ns per watch${what}`);
    row(`${label}, CPU ms`, `${spread(cpu)}  = ${fmt(median(cpu) * 1e6 / N)} ns per watch`);
  };
  times(`open ${fmt(N)} (one at a time, each decided)`, open, '');
  row(`idle CPU, ${fmt(N)} watches open (µs per s)`, spread(idleWith));
  row('idle CPU, no watch open (µs per s)', spread(idleWithout));
  times(`policy change → all ${fmt(N)} aborted`, aborted, '  (hint, refetch, a listener each)');
  times(`close() all ${fmt(N)}`, closed, '');
  await authorizer.close();
  server.close();

  // ---- The revocation check on the hot path: a cached token, empty list vs 100,000 entries. ----
  const empty = createAuthorizer({ baseUrl: BASE_URL, localJwks: jwks });
  const full = createAuthorizer({ baseUrl: BASE_URL, localJwks: jwks });
  const ENTRIES = 100_000;
  for (let i = 0; i < ENTRIES / 2; i++) await full.revoke({ jti: `revoked-${i}` });
  for (let i = 0; i < ENTRIES / 2; i++) await full.revoke({ sub: `revoked-actor-${i}` });
  const { entries, collapsed } = full.status().revocations;
  if (entries !== ENTRIES || collapsed) throw new Error(`revocation list: ${entries} entries, collapsed ${collapsed}`);
  // A real token: sub and jti of a watched caller (none revoked), warm in both caches.
  const authorization = tokens[1]!;
  if ((await empty.authenticate(authorization)).claims.sub !== 'actor-1' || (await full.authenticate(authorization)).claims.sub !== 'actor-1') throw new Error('authenticate failed');
  const lastDot = authorization.lastIndexOf('.');
  const signingInput = Buffer.from(authorization.slice('Bearer '.length, lastDot), 'latin1');
  const signature = Buffer.from(authorization.slice(lastDot + 1), 'base64url');
  if (!verify('sha256', signingInput, key.publicKey, signature)) throw new Error('raw verify failed');

  console.log(`\nauthenticate of a cached token against the revocation list (${fmt(ENTRIES)} entries: half jti, half sub; none matching)\n`);
  console.log(formatHeader());
  const [raw, none, hundredK] = await measureInterleaved([
    { name: 'raw crypto.verify RS256 (ceiling)', fn: () => verify('sha256', signingInput, key.publicKey, signature) },
    { name: 'authenticate, cached, list empty', fn: () => empty.authenticate(authorization) },
    { name: `authenticate, cached, ${fmt(ENTRIES)} revoked`, fn: () => full.authenticate(authorization) },
  ], { alternate: true });
  for (const r of [raw!, none!, hundredK!]) console.log(formatResult(r));
  // Round by round, wall clock and per CPU-second (the latter barely moves with other processes' load).
  const ratio = (a: typeof raw, b: typeof raw): string =>
    `${spread(pairedRatios(a!.batchOpsPerSec, b!.batchOpsPerSec), 2)} wall, ${spread(pairedRatios(a!.batchOpsPerCpuSec, b!.batchOpsPerCpuSec), 2)} CPU`;
  console.log('');
  row('cached authenticate, empty list / raw verify (×)', ratio(none, raw));
  row(`cached authenticate, ${fmt(ENTRIES)} entries / raw verify (×)`, ratio(hundredK, raw));
  row(`time per call, ${fmt(ENTRIES)} entries / empty list`, ratio(none, hundredK));
  await Promise.all([empty.close(), full.close()]);
  console.log(`\n(${fmt((performance.now() - started) / 1000, 0)} s in all)`);
}
