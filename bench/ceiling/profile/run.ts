/**
 * `npm run bench:profile -- <kind> [repeated|distinct] [seconds]`: where a guarded request's time
 * goes. Starts one server of bench/http (default `fastify-iam`) under `--cpu-prof`, loads it with
 * autocannon (default: one repeated token, 5 s, after 1 s of warm-up), stops it so that V8 writes
 * the profile, and prints the functions with the most self time, grouped by where they live
 * (iam-authz, Fastify/Express, Node internals, RSA, GC). Writes the summary next to this script as
 * `<kind>-<workload>.txt`; the raw `.cpuprofile` (load it in Chrome DevTools or speedscope for the
 * flame graph) stays in the system's temporary directory.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, startBenchIam, startServer, stopServer, type Workload } from '../../http/harness.js';
import { KINDS, type ServerKind } from '../../http/kinds.js';
import { summarize, type CpuProfile } from './summary.js';

const kind = (process.argv[2] ?? 'fastify-iam') as ServerKind;
const workload = (process.argv[3] ?? 'repeated') as Workload;
const seconds = Number(process.argv[4] ?? 5);
if (!KINDS.includes(kind)) throw new TypeError(`unknown server kind ${kind} (${KINDS.join(', ')})`);

const dir = mkdtempSync(join(tmpdir(), 'iam-authz-prof-'));
const tokens = await startBenchIam(workload === 'distinct' ? 2000 : 0);
const server = await startServer(kind, tokens.env, ['--cpu-prof', '--cpu-prof-dir', dir]);
const warm = await load(server.url, tokens, workload, 1, 10);
const result = await load(server.url, tokens, workload, seconds, 10);
await stopServer(server);
await tokens.iam.close();

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
// Every request served while profiling (warm-up included); start-up (module loading) is in the profile too.
const requests = warm.requests.total + result.requests.total;
const lines = [
  `${kind}, ${workload === 'repeated' ? 'one repeated token' : 'distinct tokens'}, 1 s warm-up + ${seconds} s, 10 connections: ${requests} requests (${Math.round(result.requests.total / seconds)} req/s measured)`,
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}; start-up (module loading: wrapSafe, compileSourceTextModule, makeSyncRequest …) is in the profile too`,
  ...summarize(profile, requests, 'request'),
];
const out = fileURLToPath(new URL(`./${kind}-${workload}.txt`, import.meta.url));
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
console.log(`\nsummary: ${out}\nraw profile: ${join(dir, file)}`);
