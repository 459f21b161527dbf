/**
 * `npm run bench:split [-- --framework fastify|express] [--seconds 10] [--control] [--ours kind]`: where the
 * distinct-token gap goes, measured without drift. Interleaved rounds on a shared VM swing ±10–20 %
 * (the machine's speed drifts between two loads); here the ceiling server and ours run at the same
 * time, each under its own autocannon load, while `perf record` samples both processes: both see
 * the same machine, and the samples of each are attributed per request by category (our JS, V8
 * builtins and runtime, OpenSSL, the kernel, …). `--control` runs the ceiling against a second copy
 * of itself: the spread of that A/A table is the method's noise.
 *
 * Needs Linux `perf` (with `perf_event_paranoid` ≤ 2 for one's own processes); without it, says so
 * and exits 0. A report, never a test.
 */
import { execFileSync, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { load, startBenchIam, startServer, stopServer, type Server } from '../http/harness.js';
import { KINDS, type ServerKind } from '../http/kinds.js';

const { values } = parseArgs({
  options: { framework: { type: 'string', default: 'fastify' }, seconds: { type: 'string', default: '10' }, control: { type: 'boolean', default: false }, ours: { type: 'string' } },
});
const framework = values.framework === 'express' ? 'express' : 'fastify';
const seconds = Number(values.seconds);
if (!(seconds >= 2 && seconds <= 120)) throw new TypeError('bench:split: --seconds must be within [2, 120]');
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  console.log('bench:split: no `perf` on this machine (Debian: apt-get install linux-perf); nothing measured');
  process.exit(0);
}

// `--ours fastify-iam-authn`: a route that only authenticates, to split verifying from deciding.
const ours = values.control ? `${framework}-ceiling-hook` : values.ours ?? `${framework}-iam-nocache`;
if (!KINDS.includes(ours as ServerKind)) throw new TypeError(`bench:split: --ours must be a server kind of bench/http/kinds.ts, not ${ours}`);
const kinds = [`${framework}-ceiling-hook`, ours] as ServerKind[];
/** perf's sampling rate (Hz): each sample stands for 1/HZ s of one thread's CPU time. */
const HZ = 1999;
const DATA = `/tmp/iam-authz-bench-split-${process.pid}.data`;
let starting: Promise<Server[]> | undefined;
// JIT frames named in perf's map (`/tmp/perf-<pid>.map`), so that our functions are told apart.
const tokens = await startBenchIam(2000, (env) => {
  starting = Promise.all(kinds.map((kind) => startServer(kind, env, ['--perf-basic-prof-only-functions'])));
});
const servers = await (starting as Promise<Server[]>);
console.error(`warming up ${kinds.join(' and ')}…`);
await Promise.all(servers.map((s) => load(s.url, tokens, 'distinct', 3, 10)));
console.error(`${seconds} s of distinct tokens on both at once, sampled by perf at ${HZ} Hz…`);
const perf = spawn('perf', ['record', '-F', String(HZ), '-p', servers.map((s) => s.child.pid).join(','), '-o', DATA, '--', 'sleep', String(seconds)], { stdio: 'ignore' });
const results = await Promise.all(servers.map((s) => load(s.url, tokens, 'distinct', seconds, 10)));
await new Promise((resolve) => perf.once('exit', resolve));
const requests = results.map((r) => r.requests.total);
if (results.some((r) => r.non2xx + r.errors > 0)) throw new Error('bench:split: a server answered non-2xx: not measuring a granted request');
for (const s of servers) await stopServer(s);
await tokens.iam.close();

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

const report = execFileSync('perf', ['report', '-i', DATA, '--no-children', '--sort', 'pid,dso,sym', '--stdio', '-n'], { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
execFileSync('rm', ['-f', DATA]);
const pids = servers.map((s) => String(s.child.pid));
const perRequest = servers.map(() => new Map<string, number>());
for (const line of report.split('\n')) {
  // "  12.34%  5678  1234:node  node  [.] symbol" (JIT code: "[JIT] tid 1234" as the object)
  const m = /^\s+[\d.]+%\s+(\d+)\s+(\d+):\S+\s+(\[JIT\] tid \d+|\S+)\s+\[.\]\s+(.*)$/.exec(line);
  if (!m) continue;
  const i = pids.indexOf(m[2] as string);
  if (i < 0) continue;
  const name = category(m[3] as string, (m[4] as string).trim());
  const us = (Number(m[1]) * 1e6) / HZ / (requests[i] as number);
  perRequest[i]!.set(name, (perRequest[i]!.get(name) ?? 0) + us);
}
const total = (t: Map<string, number>): number => [...t.values()].reduce((a, b) => a + b, 0);
const [a, b] = perRequest as [Map<string, number>, Map<string, number>];
const names = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => ((b.get(y) ?? 0) - (a.get(y) ?? 0)) - ((b.get(x) ?? 0) - (a.get(x) ?? 0)));
const label = values.control ? 'ceiling (copy)' : 'iam-authz';
console.log(`${framework}: CPU µs per request by category, ${kinds[0]} and ${kinds[1]} loaded at the same time for ${seconds} s (${requests.join(' and ')} requests)\n`);
console.log(`| category | ceiling | ${label} | difference |`);
console.log('|---|---|---|---|');
for (const n of names) console.log(`| ${n} | ${(a.get(n) ?? 0).toFixed(2)} | ${(b.get(n) ?? 0).toFixed(2)} | ${((b.get(n) ?? 0) - (a.get(n) ?? 0)) >= 0 ? '+' : ''}${((b.get(n) ?? 0) - (a.get(n) ?? 0)).toFixed(2)} |`);
console.log(`| **total** | ${total(a).toFixed(2)} | ${total(b).toFixed(2)} | ${(total(b) - total(a)).toFixed(2)} (ratio ${(total(a) / total(b)).toFixed(3)}) |`);
