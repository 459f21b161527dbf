/**
 * `npm run soak -- --duration 60 --seed 1`: about 20 concurrent clients send valid, expired,
 * forged, unknown-kid, same-kid-replaced, refused and malformed tokens through an Express and a
 * Koa guard while a fault proxy makes the development IAM's JWKS and policy API fail, stall, answer
 * garbage, publish a replaced key, and refuse one user's token; the IAM also rotates its keys.
 *
 * It prints what every kind of token got, and exits 1 unless: no request was wrongly granted, no
 * answer was a 500 (or anything but 200/401/403/503), users with valid tokens got exactly the spec's
 * answer whenever the upstreams had been healthy for a whole phase (so one user's refusal never
 * spilled onto them), no upstream text reached an event, and the heap after GC stayed within
 * HEAP_BOUND_MIB of the heap after warm-up. The seed fixes the sequence of requests and faults;
 * timing varies from run to run.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { subscribe } from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import express from 'express';
import Koa from 'koa';
import Router from '@koa/router';
import { Pool } from 'undici';
import { channels, createAuthorizer, type Authorizer } from '../../../src/index.js';
import { expressAuthz } from '../../../adapters/express/index.js';
import { koaAuthz } from '../../../adapters/koa/index.js';
import { startDevIam } from 'iam-authz-dev';
import { startFaultProxy, UPSTREAM_MARKER, type JwksMode, type PolicyMode } from './fault-proxy.js';
import { KINDS, pick, prng, REFUSED, SERVICE, soakConfig, TokenBook, type PlannedRequest } from './traffic.js';

/** Largest growth of the heap after GC, from the end of warm-up to the end of the run. */
const HEAP_BOUND_MIB = 16;
const PHASE_MS = 600;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    clients: { type: 'string', default: '20' },
  },
});
const durationMs = Number(values.duration) * 1000;
const seed = Number(values.seed);
const clients = Number(values.clients);
if (!(durationMs >= 2000) || !Number.isSafeInteger(seed) || !(clients >= 1 && clients <= 200)) {
  console.error('usage: soak [--duration seconds >= 2] [--seed integer] [--clients 1..200]');
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with node --expose-gc (npm run soak does)');
  process.exit(2);
}

const violations: string[] = [];
const note = (message: string): void => { if (violations.length < 50) violations.push(message); };

const iam = await startDevIam({ config: soakConfig() });
const book = new TokenBook(iam);
const proxy = await startFaultProxy({
  target: iam.baseUrl,
  replacedJwks: () => ({ keys: [{ ...book.replacement.jwk, kid: book.currentKid }] }),
  refusedSubject: REFUSED,
  stallMs: 1500,
});

// Every event on every channel is checked for upstream text and token text.
let events = 0;
const onEvent = (message: unknown, name: string | symbol): void => {
  events++;
  const text = describe(message);
  if (text.includes(UPSTREAM_MARKER)) note(`upstream text in an event on ${String(name)}`);
  for (const part of book.signatures) if (text.includes(part)) note(`token text in an event on ${String(name)}`);
};
for (const name of Object.values(channels)) subscribe(name, onEvent);

function makeAuthorizer(): Authorizer {
  return createAuthorizer({
    issuer: iam.issuer,
    jwksUri: `${proxy.url}/authentication/v1/.well-known/jwks.json`,
    policyUrl: `${proxy.url}/policy/v1/roles`,
    jwks: { ttlMs: 500, minRefreshIntervalMs: 100, timeoutMs: 400 },
    policy: { ttlMs: 300, minRefreshIntervalMs: 100, timeoutMs: 400, maxStaleMs: 60_000 },
  });
}

async function listen(server: Server): Promise<string> {
  if (!server.listening) await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const expressAuthorizer = makeAuthorizer();
const expressApp = express();
{
  const { requirePermission } = expressAuthz(expressAuthorizer);
  const vin = (req: express.Request) => req.params.vin as string;
  expressApp.get('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), (_req, res) => { res.send('ok'); });
  expressApp.put('/vehicle/:vin', requirePermission(SERVICE, 'WRITE', 'VIN', vin), (_req, res) => { res.send('ok'); });
}
const expressServer = expressApp.listen(0, '127.0.0.1');
const koaAuthorizer = makeAuthorizer();
const koaApp = new Koa();
{
  const { requirePermission } = koaAuthz(koaAuthorizer);
  const router = new Router();
  const vin = (ctx: Koa.Context) => (ctx.params as Record<string, string>).vin;
  router.get('/vehicle/:vin', requirePermission(SERVICE, 'READ', 'VIN', vin), (ctx) => { ctx.body = 'ok'; });
  router.put('/vehicle/:vin', requirePermission(SERVICE, 'WRITE', 'VIN', vin), (ctx) => { ctx.body = 'ok'; });
  koaApp.use(router.routes());
}
const koaServer = koaApp.listen(0, '127.0.0.1');
const targets = [
  { name: 'express', pool: new Pool(await listen(expressServer), { connections: clients }) },
  { name: 'koa', pool: new Pool(await listen(koaServer), { connections: clients }) },
];

// The fault schedule: one phase every PHASE_MS, chosen by the seed.
const schedule = prng(seed);
let phase = { id: 0, calm: true, previousCalm: true, label: 'calm' };
const phaseCounts = new Map<string, number>();
function nextPhase(): void {
  const roll = schedule();
  let jwks: JwksMode = 'ok';
  let policy: PolicyMode = 'ok';
  if (roll >= 0.45 && roll < 0.7) jwks = pick(schedule, ['error', 'slow', 'garbage', 'replaced'] as const);
  else if (roll >= 0.7) policy = pick(schedule, ['error', 'slow', 'garbage', 'wrong-app'] as const);
  if (schedule() < 0.15) {
    iam.rotateKeys();
    book.remint();
  }
  proxy.jwks = jwks;
  proxy.policy = policy;
  const calm = jwks === 'ok' && policy === 'ok';
  const label = calm ? 'calm' : jwks === 'ok' ? `policy:${policy}` : `jwks:${jwks}`;
  phaseCounts.set(label, (phaseCounts.get(label) ?? 0) + 1);
  phase = { id: phase.id + 1, calm, previousCalm: phase.calm, label };
}
const phaseTimer = setInterval(nextPhase, PHASE_MS);

// Outcomes are judged as they come and only counted, so the soak's own memory stays flat.
const byKind = new Map(KINDS.map((kind) => [kind, new Map<number, number>()]));
const tally = { answers: 0, wrongGrants: 0, serverErrors: 0, stableValid: 0, refusedRequests: 0 };
let networkErrors = 0;
const started = Date.now();
const deadline = started + durationMs;
const warmupEnd = started + Math.min(3000, durationMs * 0.2);
let heapAfterWarmup: number | undefined;

function judge(plan: PlannedRequest, status: number, stableCalm: boolean): void {
  tally.answers++;
  const counts = byKind.get(plan.kind) as Map<number, number>;
  counts.set(status, (counts.get(status) ?? 0) + 1);
  if (plan.kind === 'refused-user') tally.refusedRequests++;
  if (status >= 500 && status !== 503) tally.serverErrors++;
  if (status === 200 && plan.expected !== 200) {
    tally.wrongGrants++;
    note(`WRONG GRANT: ${plan.kind} ${plan.method} ${plan.vin} answered 200`);
  }
  if (!plan.acceptable.has(status)) note(`${plan.kind} ${plan.method} ${plan.vin}: answered ${status}, acceptable ${[...plan.acceptable].join('/')}`);
  if (plan.kind === 'valid' && stableCalm) {
    tally.stableValid++;
    if (status !== plan.expected) note(`valid token of ${plan.user} ${plan.method} ${plan.vin}: answered ${status} after a healthy phase, expected ${plan.expected}`);
  }
}

async function client(index: number): Promise<void> {
  const random = prng(seed * 1000 + index + 1);
  while (Date.now() < deadline) {
    const plan = book.plan(random);
    const target = pick(random, targets);
    const before = phase;
    const headers: Record<string, string> = plan.authorization === undefined ? {} : { authorization: plan.authorization };
    try {
      const res = await target.pool.request({ method: plan.method, path: `/vehicle/${plan.vin}`, headers });
      await res.body.dump();
      judge(plan, res.statusCode, before.calm && before.previousCalm && phase.id === before.id);
    } catch {
      networkErrors++;
    }
  }
}

const warmup = setTimeout(() => {
  gc();
  heapAfterWarmup = process.memoryUsage().heapUsed;
}, warmupEnd - started);
await Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
clearInterval(phaseTimer);
clearTimeout(warmup);
gc();
const heapAtEnd = process.memoryUsage().heapUsed;

const { refusedRequests } = tally;
if (proxy.counts.refused > Math.max(10, refusedRequests / 4)) {
  note(`the refused token reached the policy API ${proxy.counts.refused} times for ${refusedRequests} requests`);
}
if (networkErrors > 0) note(`${networkErrors} requests got no HTTP answer`);
const growthMiB = heapAfterWarmup === undefined ? 0 : (heapAtEnd - heapAfterWarmup) / 2 ** 20;
if (growthMiB > HEAP_BOUND_MIB) note(`heap grew ${growthMiB.toFixed(1)} MiB after warm-up (bound ${HEAP_BOUND_MIB} MiB)`);

// Report.
const statuses = [200, 401, 403, 503];
const other = (counts: Map<number, number>) => [...counts].filter(([s]) => !statuses.includes(s)).reduce((n, [, c]) => n + c, 0);
console.log(`soak: seed ${seed}, ${clients} clients, ${(durationMs / 1000).toFixed(0)} s, ${tally.answers} answers, ${events} events`);
console.log(`phases: ${[...phaseCounts].map(([l, n]) => `${l} ${n}`).join(', ')}`);
console.log(`upstream requests: jwks ${proxy.counts.jwks}, policy ${proxy.counts.policy} (refused ${proxy.counts.refused})`);
console.log(`\n${'token kind'.padEnd(20)}${statuses.map((s) => String(s).padStart(8)).join('')}   other`);
for (const kind of KINDS) {
  const counts = byKind.get(kind) as Map<number, number>;
  console.log(`${kind.padEnd(20)}${statuses.map((s) => String(counts.get(s) ?? 0).padStart(8)).join('')}${String(other(counts)).padStart(8)}`);
}
console.log(`\nheap after GC: ${((heapAfterWarmup ?? 0) / 2 ** 20).toFixed(1)} MiB after warm-up, ${(heapAtEnd / 2 ** 20).toFixed(1)} MiB at the end (bound +${HEAP_BOUND_MIB} MiB)`);
console.log(`valid tokens answered after a healthy phase: ${tally.stableValid}, all must match the spec's answer`);
console.log(`wrong grants: ${tally.wrongGrants}; 5xx other than 503: ${tally.serverErrors}`);

for (const target of targets) await target.pool.close();
await Promise.all([expressAuthorizer.close(), koaAuthorizer.close()]);
await new Promise<void>((resolve) => { expressServer.closeAllConnections(); expressServer.close(() => { resolve(); }); });
await new Promise<void>((resolve) => { koaServer.closeAllConnections(); koaServer.close(() => { resolve(); }); });
await proxy.close();
await iam.close();

if (violations.length > 0) {
  console.log(`\nFAILED (${violations.length} problems):`);
  for (const v of violations) console.log(`  - ${v}`);
  process.exit(1);
}
console.log('\nsoak passed');

/** A flat text of an event: values, error messages, causes and stacks, for the leak check. */
function describe(value: unknown, depth = 0): string {
  if (depth > 6 || value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object') return typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  if (value instanceof Error) {
    const own = Object.fromEntries(Object.entries(value));
    return `${value.message} ${value.stack ?? ''} ${describe(value.cause, depth + 1)} ${describe(own, depth + 1)}`;
  }
  return Object.values(value as Record<string, unknown>).map((v) => describe(v, depth + 1)).join(' ');
}
