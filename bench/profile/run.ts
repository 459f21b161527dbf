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
import { load, startBenchIam, startServer, stopServer, type Workload } from '../http/harness.js';
import { KINDS, type ServerKind } from '../http/kinds.js';

const kind = (process.argv[2] ?? 'fastify-iam') as ServerKind;
const workload = (process.argv[3] ?? 'repeated') as Workload;
const seconds = Number(process.argv[4] ?? 5);
if (!KINDS.includes(kind)) throw new TypeError(`unknown server kind ${kind} (${KINDS.join(', ')})`);

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const dir = mkdtempSync(join(tmpdir(), 'iam-authz-prof-'));
const tokens = await startBenchIam(workload === 'distinct' ? 2000 : 0);
const server = await startServer(kind, tokens.env, ['--cpu-prof', '--cpu-prof-dir', dir]);
const warm = await load(server.url, tokens, workload, 1, 10);
const result = await load(server.url, tokens, workload, seconds, 10);
await stopServer(server);
await tokens.iam.close();

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => { self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)); });
const total = [...self.values()].reduce((a, b) => a + b, 0);

const short = (url: string): string => url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/(src|adapters|bench)\//, '$1/');
function group(frame: Node['callFrame']): string {
  const { functionName: name, url } = frame;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)') return name;
  if (name === 'verify' && url.includes('crypto') || name === 'verifyOneShot') return 'RSA (crypto.verify)';
  if (/\/(src|adapters)\//.test(url) && !url.includes('node_modules')) return 'iam-authz';
  if (/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify|fast-json-stringify)/.test(url)) return 'Fastify';
  if (/node_modules\/(express|router|body-parser|finalhandler|send|on-finished|content-type|qs|depd)/.test(url)) return 'Express';
  if (url.startsWith('node:') || url === '') return 'Node internals / native';
  return 'other';
}
const byFunction = new Map<string, number>();
const byGroup = new Map<string, number>();
for (const [id, us] of self) {
  const frame = byId.get(id)!.callFrame;
  const key = `${frame.functionName || '(anonymous)'} ${short(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  byGroup.set(group(frame), (byGroup.get(group(frame)) ?? 0) + us);
}
const pct = (us: number): string => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
// Every request served while profiling (warm-up included); start-up (module loading) is in the profile too.
const requests = warm.requests.total + result.requests.total;
const busy = total - (byGroup.get('(idle)') ?? 0);
const lines = [
  `${kind}, ${workload === 'repeated' ? 'one repeated token' : 'distinct tokens'}, 1 s warm-up + ${seconds} s, 10 connections: ${requests} requests (${Math.round(result.requests.total / seconds)} req/s measured)`,
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}; start-up (module loading: wrapSafe, compileSourceTextModule, makeSyncRequest …) is in the profile too`,
  `profile: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy = ${(busy / requests).toFixed(1)} µs per request on the main thread`,
  '',
  'self time by group (µs per request):',
  ...[...byGroup].sort((a, b) => b[1] - a[1]).map(([g, us]) => `  ${pct(us)}  ${(us / requests).toFixed(2).padStart(6)}  ${g}`),
  '',
  'top 30 functions by self time:',
  ...[...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([f, us]) => `  ${pct(us)}  ${(us / requests).toFixed(2).padStart(6)}  ${f}`),
];
const out = fileURLToPath(new URL(`./${kind}-${workload}.txt`, import.meta.url));
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
console.log(`\nsummary: ${out}\nraw profile: ${join(dir, file)}`);
