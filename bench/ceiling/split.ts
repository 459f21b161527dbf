/**
 * `npm run bench:split [-- --framework fastify|express] [--seconds 10] [--control] [--ours kind]
 * [--base kind] [--also kind] [--symbols N] [--runs N] [--no-perf]`: where the
 * distinct-token gap goes, measured without drift. Interleaved rounds on a shared VM swing ±10–20 %
 * (the machine's speed drifts between two loads); here the ceiling server and ours run at the same
 * time, each under its own autocannon load, while `perf record` samples both processes: both see
 * the same machine, and the samples of each are attributed per request by category (our JS, V8
 * builtins and runtime, OpenSSL, the kernel, …). `--control` runs the ceiling against a second copy
 * of itself: the spread of that A/A table is the method's noise. `--ours fastify-least` measures the
 * limit (`least.ts`: the least verifier making the same decision) against the ceiling, and
 * `--base fastify-least` measures iam-authz against that limit. `--symbols N` adds the N functions
 * whose per-request time differs most. `--runs N` measures N times over the same two servers and
 * prints each run's ratio, their median and spread; the tables sum all runs. `--also kind` (repeatable)
 * loads one more server at the same time, e.g. `--also fastify-least`: the ceiling, the limit and
 * ours in one measurement, so that no ratio comes from another session.
 *
 * The categories need Linux `perf` (with `perf_event_paranoid` ≤ 2 for one's own processes). Without
 * it, or with `--no-perf`, each server's CPU per request comes from its own `process.cpuUsage()`
 * instead: the ratios only, without perf's JIT map in the servers (which inflates Express's
 * absolute figures). A report, never a test.
 */
import { execFileSync, spawn } from 'node:child_process';
import type autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { spread } from '../lib/stats.mjs';
import { cpuOf, load, startBenchIam, startServer, stopServer, type Server } from '../http/harness.js';
import { KINDS, type ServerKind } from '../http/kinds.js';

const { values } = parseArgs({
  allowNegative: true,
  options: {
    framework: { type: 'string', default: 'fastify' }, seconds: { type: 'string', default: '10' }, control: { type: 'boolean', default: false },
    ours: { type: 'string' }, base: { type: 'string' }, symbols: { type: 'string', default: '0' }, runs: { type: 'string', default: '1' },
    also: { type: 'string', multiple: true, default: [] }, perf: { type: 'boolean', default: true },
  },
});
const framework = values.framework === 'express' ? 'express' : 'fastify';
const seconds = Number(values.seconds);
if (!(seconds >= 2 && seconds <= 120)) throw new TypeError('bench:split: --seconds must be within [2, 120]');
/** Sampled by perf (categories, symbols), or only each server's own CPU time (ratios). */
let usePerf = values.perf;
if (usePerf) {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    console.log('bench:split: no `perf` on this machine (Debian: apt-get install linux-perf): ratios from each server\'s own CPU time, no categories');
    usePerf = false;
  }
}

// `--ours fastify-iam-authn`: a route that only authenticates, to split verifying from deciding.
const ours = values.control ? `${framework}-ceiling-hook` : values.ours ?? `${framework}-iam-nocache`;
if (!KINDS.includes(ours as ServerKind)) throw new TypeError(`bench:split: --ours must be a server kind of bench/http/kinds.ts, not ${ours}`);
const base = values.base ?? `${framework}-ceiling-hook`;
if (!KINDS.includes(base as ServerKind)) throw new TypeError(`bench:split: --base must be a server kind of bench/http/kinds.ts, not ${base}`);
for (const kind of values.also) if (!KINDS.includes(kind as ServerKind)) throw new TypeError(`bench:split: --also must be a server kind of bench/http/kinds.ts, not ${kind}`);
const kinds = [base, ours, ...values.also] as ServerKind[];
const symbolCount = Number(values.symbols);
const runs = Number(values.runs);
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 20)) throw new TypeError('bench:split: --runs must be an integer within [1, 20]');
/** perf's sampling rate (Hz): each sample stands for 1/HZ s of one thread's CPU time. */
const HZ = 1999;
const DATA = `/tmp/iam-authz-bench-split-${process.pid}.data`;
let starting: Promise<Server[]> | undefined;
// JIT frames named in perf's map (`/tmp/perf-<pid>.map`), so that our functions are told apart.
const tokens = await startBenchIam(2000, (env) => {
  starting = Promise.all(kinds.map((kind) => startServer(kind, env, usePerf ? ['--perf-basic-prof-only-functions'] : [])));
});
const servers = await (starting as Promise<Server[]>);
console.error(`warming up ${kinds.join(' and ')}…`);
await Promise.all(servers.map((s) => load(s.url, tokens, 'distinct', 3, 10)));
const perRequest = servers.map(() => new Map<string, number>());
const perSymbol = servers.map(() => new Map<string, number>());
const requests = servers.map(() => 0);
/** Per server after the first: the first's CPU per request / this one's, per run. */
const ratios: number[][] = kinds.slice(1).map(() => []);
/** Per server: its CPU µs per request, per run. */
const cpuPerRun: number[][] = kinds.map(() => []);
for (let run = 1; run <= runs; run++) {
  console.error(`run ${run}/${runs}: ${seconds} s of distinct tokens on all at once, ${usePerf ? `sampled by perf at ${HZ} Hz` : 'each server\'s CPU time read'}…`);
  const perf = usePerf ? spawn('perf', ['record', '-F', String(HZ), '-p', servers.map((s) => s.child.pid).join(','), '-o', DATA, '--', 'sleep', String(seconds)], { stdio: 'ignore' }) : undefined;
  const before = usePerf ? [] : await Promise.all(servers.map(cpuOf));
  const results = await Promise.all(servers.map((s) => load(s.url, tokens, 'distinct', seconds, 10)));
  const used = usePerf ? [] : (await Promise.all(servers.map(cpuOf))).map((after, i) => after - (before[i] as number));
  if (perf) await new Promise((resolve) => perf.once('exit', resolve));
  if (results.some((r) => r.non2xx + r.errors > 0)) throw new Error('bench:split: a server answered non-2xx: not measuring a granted request');
  // CPU µs per request of each server in this run (with perf, also added to the sums over all runs).
  const cpuUs = usePerf
    ? samplesOf(execFileSync('perf', ['report', '-i', DATA, '--no-children', '--sort', 'pid,dso,sym', '--stdio', '-n'], { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] })).map((n) => (n * 1e6) / HZ)
    : used;
  const cpu = cpuUs.map((us, i) => us / (results[i] as autocannon.Result).requests.total);
  for (const [i, list] of ratios.entries()) list.push((cpu[0] as number) / (cpu[i + 1] as number));
  cpu.forEach((c, i) => cpuPerRun[i]?.push(c));
  console.error(`run ${run}: ${cpu.map((c) => c.toFixed(2)).join(', ')} CPU µs per request; ratios ${ratios.map((list) => (list.at(-1) as number).toFixed(3)).join(', ')}`);
  results.forEach((r, i) => { requests[i] = (requests[i] as number) + r.requests.total; });
}
execFileSync('rm', ['-f', DATA]);
for (const s of servers) await stopServer(s);
await tokens.iam.close();
/** Each run's ratio of the first server to each other one, with their median and min–max. */
function printRatios(): void {
  for (const [i, list] of ratios.entries()) console.log(`ratio ${kinds[0]} / ${kinds[i + 1]} per run: ${list.map((r) => r.toFixed(3)).join(', ')}; median ${spread(list, 3)}`);
}
if (!usePerf) {
  console.log(`${framework}: CPU µs per request from each server's own CPU time, ${kinds.join(', ')} loaded at the same time, ${runs} × ${seconds} s (${requests.join(', ')} requests)`);
  console.log(`CPU µs per request, median of runs (min–max): ${kinds.map((k, i) => `${k} ${spread(cpuPerRun[i] as number[], 2)}`).join('; ')}`);
  printRatios();
  process.exit(0);
}
// Samples were summed over the runs: per request of all runs.
for (const [i, table] of [...perRequest, ...perSymbol].entries()) {
  for (const [name, n] of table) table.set(name, (n * 1e6) / HZ / (requests[i % servers.length] as number));
}

/** The category of one sampled symbol. */
function category(dso: string, symbol: string): string {
  if (dso.startsWith('[kernel')) return 'kernel (sockets, scheduling)';
  if (symbol.startsWith('JS:')) {
    if (/\/(src|adapters)\//.test(symbol) && !symbol.includes('node_modules')) return 'our JS';
    if (symbol.includes('/bench/')) return 'the ceiling\'s JS';
    if (symbol.includes('node_modules/')) return 'framework JS';
    return 'Node.js JS (http, streams)';
  }
  if (dso.startsWith('[JIT]')) return 'unnamed JIT code (regular expressions)';
  if (symbol.startsWith('Builtins_')) return 'V8 builtins (property access, promises)';
  if (symbol.startsWith('v8::') || symbol.startsWith('Heap') || symbol.includes('Scaveng')) return 'V8 runtime and GC';
  if (/^(_*bn_|BN_|ossl|OPENSSL|EVP|RSA|rsa|sha|CRYPTO|ERR|OSSL|evp|do_name|mulx|int_|pthread_rwlock)/.test(symbol)) return 'OpenSSL (RSA verify)';
  if (symbol.startsWith('llhttp') || symbol.includes('Parser')) return 'HTTP parser';
  return 'other native (Node.js, libuv, libc)';
}

/** Adds one `perf report`'s sample counts to the sums by category and function; the total per server. */
function samplesOf(report: string): number[] {
  const pids = servers.map((s) => String(s.child.pid));
  const counted = servers.map(() => 0);
  for (const line of report.split('\n')) {
    // "  12.34%  5678  1234:node  node  [.] symbol" (JIT code: "[JIT] tid 1234" as the object)
    const m = /^\s+[\d.]+%\s+(\d+)\s+(\d+):\S+\s+(\[JIT\] tid \d+|\S+)\s+\[.\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const i = pids.indexOf(m[2] as string);
    if (i < 0) continue;
    const n = Number(m[1]);
    counted[i] = (counted[i] as number) + n;
    const name = category(m[3] as string, (m[4] as string).trim());
    perRequest[i]!.set(name, (perRequest[i]!.get(name) ?? 0) + n);
    const symbol = (m[4] as string).trim().replace(/ \S*node_modules\/|file:\/\/\S*\/(?=(src|adapters|bench)\/)/g, ' ');
    perSymbol[i]!.set(symbol, (perSymbol[i]!.get(symbol) ?? 0) + n);
  }
  return counted;
}
const total = (t: Map<string, number>): number => [...t.values()].reduce((x, y) => x + y, 0);
const [a, b] = perRequest as [Map<string, number>, Map<string, number>];
const names = [...new Set(perRequest.flatMap((t) => [...t.keys()]))].sort((x, y) => ((b.get(y) ?? 0) - (a.get(y) ?? 0)) - ((b.get(x) ?? 0) - (a.get(x) ?? 0)));
const label = values.control ? 'ceiling (copy)' : ours;
const labels = [base, label, ...values.also];
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
console.log(`${framework}: CPU µs per request by category, ${kinds.join(', ')} loaded at the same time, ${runs} × ${seconds} s (${requests.join(', ')} requests)`);
printRatios();
const others = labels.slice(1);
console.log(`\n| category | ${labels.join(' | ')} | ${others.map((l) => `${l} − ${base}`).join(' | ')} |`);
console.log(`|---|${labels.map(() => '---|').join('')}${others.map(() => '---|').join('')}`);
for (const n of names) {
  const cells = perRequest.map((t) => t.get(n) ?? 0);
  console.log(`| ${n} | ${cells.map((c) => c.toFixed(2)).join(' | ')} | ${cells.slice(1).map((c) => signed(c - (cells[0] as number))).join(' | ')} |`);
}
const totals = perRequest.map(total);
console.log(`| **total** | ${totals.map((t) => t.toFixed(2)).join(' | ')} | ${totals.slice(1).map((t) => `${signed(t - (totals[0] as number))} (ratio ${((totals[0] as number) / t).toFixed(3)})`).join(' | ')} |`);
if (symbolCount > 0) {
  const [x, y] = perSymbol as [Map<string, number>, Map<string, number>];
  const diff = (n: string): number => (y.get(n) ?? 0) - (x.get(n) ?? 0);
  const top = [...new Set([...x.keys(), ...y.keys()])].sort((p, q) => Math.abs(diff(q)) - Math.abs(diff(p))).slice(0, symbolCount);
  console.log(`\nThe ${symbolCount} functions whose CPU µs per request differ most:\n\n| function | ${base} | ${label} | difference |\n|---|---|---|---|`);
  for (const n of top) console.log(`| ${n.replaceAll('|', '\\|').slice(0, 110)} | ${(x.get(n) ?? 0).toFixed(2)} | ${(y.get(n) ?? 0).toFixed(2)} | ${diff(n) >= 0 ? '+' : ''}${diff(n).toFixed(2)} |`);
}
