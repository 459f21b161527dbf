/**
 * `node --expose-gc --import tsx bench/ceiling/distinct.ts`: the distinct-token path in-process, step
 * by step — each case takes the next token of a pool of distinct tokens (a fresh identity per call,
 * as over HTTP with `tokenCache: false`) — CPU µs and young-generation bytes per call. The Fastify
 * hook against a no-op hook doing verify + parse is our share of `fastify-distinct/ceiling`, without
 * the framework, the sockets and the load generator.
 */
import { createAuthorizer } from '../../src/authorizer.js';
import { fastifyAuthz } from '../../adapters/fastify/index.js';
import { allocation } from '../lib/alloc.js';
import { environmentLine, measureInterleaved, type BenchCase, type MeasureResult } from '../lib/measure.js';
import { pairedRatios, summarize } from '../lib/stats.mjs';
import { startBenchIam, TENANT } from '../http/harness.js';
import { verifyAndParse } from './floor.js';

const count = Number(process.env.TOKENS ?? 2000);
const { iam, publicKey, distinct } = await startBenchIam(count);
const headers = distinct.map((t) => `Bearer ${t}`);
let i = 0;
const next = (): string => headers[(i = (i + 1) % headers.length)] as string;

const authorizer = createAuthorizer({ baseUrl: iam.baseUrl, audience: TENANT, tokenCache: false });
await authorizer.ready();
const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
const hook = fastifyAuthz(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', (request) => (request.params as { vin: string }).vin) as unknown as (request: unknown, reply: unknown) => Promise<void>;
const reply = { code() { return this; }, send() { return this; }, sent: false };
const params = { vin: 'WVW1' };
// A request object per call, as Fastify makes one per request.
const hookCall = (): Promise<void> => hook({ headers: { authorization: next() }, params, iam: null }, reply);
const noopVerifyHook = async (request: { headers: { authorization?: string } }): Promise<void> => {
  const a = request.headers.authorization;
  if (a === undefined || !a.startsWith('Bearer ') || verifyAndParse(a.slice(7), publicKey) === undefined) throw new Error('unauthorized');
};
const noopCall = (): Promise<void> => noopVerifyHook({ headers: { authorization: next() } });

// Each case must do what its name says before it is timed.
const probe = { headers: { authorization: next() }, params, iam: null as unknown };
await hook(probe, reply);
if ((probe.iam as { decision?: { granted?: boolean } } | null)?.decision?.granted !== true) throw new Error('the hook did not grant');

const cases: BenchCase[] = [
  { name: 'no-op hook doing verify + parse', fn: noopCall },
  { name: 'Fastify hook, distinct tokens (tokenCache: false)', fn: hookCall },
  { name: 'verify + parse (sync)', fn: () => verifyAndParse(next().slice(7), publicKey) },
  { name: 'authenticate, uncached', fn: () => authorizer.authenticate(next()) },
  { name: 'authenticate + authorize', fn: async () => authorizer.authorize(await authorizer.authenticate(next()), query) },
];
const batches = Number(process.env.BATCHES ?? 9);
const results = await measureInterleaved(process.env.ONLY_HOOKS ? cases.slice(0, 2) : cases, { batches, batchMs: Number(process.env.BATCH_MS ?? 200), warmupMs: 1000, alternate: true });
console.log(environmentLine());
console.log(`distinct tokens in-process (pool of ${count}), ${batches} interleaved rounds\n`);
const [noop, ours] = results as [MeasureResult, MeasureResult];
const ratios = summarize(pairedRatios(ours.batchOpsPerCpuSec, noop.batchOpsPerCpuSec));
console.log(`hook / no-op hook doing verify + parse, per CPU-s: median ${ratios.median.toFixed(3)} (${ratios.min.toFixed(3)}–${ratios.max.toFixed(3)})\n`);
console.log('| case | CPU µs per call | bytes per call |');
console.log('|---|---|---|');
for (const r of results) {
  const a = await allocation(cases.find((c) => c.name === r.name)!.fn, 50_000);
  console.log(`| ${r.name} | ${(1e6 / r.opsPerCpuSec).toFixed(2)} | ${a.bytesPerCall.toFixed(0)} |`);
}
await authorizer.close();
await iam.close();
