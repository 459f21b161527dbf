/**
 * The longest event-loop stall while the largest policy `policy.maxBytes` accepts (16 MiB by
 * default) is fetched from a loopback policy API, hashed, decoded, parsed, checked and compiled by a
 * cold `authorize` — of the worst shape (one role holding every permission, ≈ 900,000) and of the
 * typical one (≈ 85,000 roles of three permissions). Also printed: one `JSON.parse` of the whole
 * body (what the loop was held for at least before parsing was sliced), the V8 GC pauses seen during
 * the fetch (a stall no slicing removes), a refetch of the same bytes (hashed, not parsed), and the
 * machine's noise floor (1-ms slices of arithmetic: on a shared machine other processes stall it).
 *
 *   npm run bench:policy-stall                    # 3 runs per shape, about 30 s
 *   BENCH_RUNS=1 npm run bench:policy-stall
 *   BENCH_POLICY_BYTES=1048576 npm run bench:policy-stall
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createAuthorizer } from '../../src/index.js';
import { loadUndici } from '../../src/lib/undici.js';
import { DEFAULT_POLICY } from '../../src/policy/options.js';
import { signJwt } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { LARGE_ROLE, LARGE_SERVICE, manyRolesPolicyText, oneRolePolicyText } from '../../test/policy/large-policy.js';
import { BASE_URL, createFixture, ISSUER } from '../lib/fixture.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_POLICY_BYTES ?? DEFAULT_POLICY.maxBytes);
const APP = 'app-1';
const fx = createFixture();

function tokenFor(role: string): string {
  const nowSec = Math.floor(Date.now() / 1000);
  return signJwt({ jti: 'jti-stall', iss: ISSUER, sub: 'actor-alice', aud: 'tenant-1', tid: 'tenant-1', exp: nowSec + 3600, iat: nowSec, acc: 'acc-1', app: APP, ars: [{ r: [role], c: ['VIN=WVW1'] }] }, fx.key, { cty: 't1' });
}

interface Shape {
  name: string;
  text: string;
  size: string;
  role: string;
  service: string;
  permission: string;
}

const worst = oneRolePolicyText(APP, BYTES);
const typical = manyRolesPolicyText(APP, BYTES);
const lastRole = typical.roles - 1;
const shapes: Shape[] = [
  { name: 'one role, every permission', text: worst.text, size: `${worst.permissions} permissions`, role: LARGE_ROLE, service: LARGE_SERVICE, permission: `P${worst.permissions - 1}` },
  { name: 'many roles, 3 permissions each', text: typical.text, size: `${typical.roles} roles, ${(Buffer.byteLength(typical.text) / typical.roles).toFixed(0)} B/role`, role: `ROLE_${lastRole}`, service: `service-${lastRole % 20}`, permission: 'WRITE' },
];

const gcPauses: number[] = [];
new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcPauses.push(entry.duration); }).observe({ entryTypes: ['gc'] });

/** Longest stall (ms), p99 (ms), wall time (ms) and GC pauses of `work`, with a 1 ms histogram. */
async function stallOf(work: () => Promise<unknown>): Promise<{ max: number; p99: number; wall: number; gcMax: number; gcCount: number }> {
  gcPauses.length = 0;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 10)); // armed: its timer has fired once
  const start = performance.now();
  await work();
  const wall = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 10)); // let the histogram see the last turn
  histogram.disable();
  const long = gcPauses.filter((d) => d >= 10);
  return { max: histogram.max / 1e6, p99: histogram.percentile(99) / 1e6, wall, gcMax: Math.max(0, ...gcPauses), gcCount: long.length };
}

// The HTTP client is imported on the process's first fetch (≈ 100 ms once): not measured here.
await loadUndici();

const ms = (n: number): string => n.toFixed(1).padStart(8);
console.log(`node ${process.version}, ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}; policy of ${BYTES} bytes; ${RUNS} run(s) per shape`);
console.log(`${'shape'.padEnd(32)} ${'case'.padEnd(24)} ${'max stall'.padStart(9)} ${'p99'.padStart(8)} ${'wall'.padStart(8)}  GC pauses ≥ 10 ms (longest)`);

/** The machine's noise floor: 1 s of 1-ms slices of arithmetic, no allocation (only other processes stall it). */
async function busyTurns(): Promise<void> {
  const end = performance.now() + 1000;
  let x = 0;
  while (performance.now() < end) {
    const sliceEnd = performance.now() + 1;
    while (performance.now() < sliceEnd) x += 1;
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (x < 0) console.log(x);
}
const floor = await stallOf(busyTurns);
console.log(`${'noise floor'.padEnd(32)} ${'1 s of 1-ms slices'.padEnd(24)} ${ms(floor.max)} ${ms(floor.p99)} ${ms(floor.wall)}  ${floor.gcCount} (${floor.gcMax.toFixed(1)} ms)`);

for (const shape of shapes) {
  const bytes = Buffer.from(shape.text, 'utf8');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy/v1/roles`;
  console.log(`${shape.name} (${bytes.length} bytes, ${shape.size})`);
  for (let run = 0; run < RUNS; run++) {
    const parse = await stallOf(async () => JSON.parse(shape.text));
    console.log(`${''.padEnd(32)} ${'JSON.parse, whole body'.padEnd(24)} ${ms(parse.max)} ${ms(parse.p99)} ${ms(parse.wall)}  ${parse.gcCount} (${parse.gcMax.toFixed(1)} ms)`);
    const authz = createAuthorizer({ baseUrl: BASE_URL, localJwks: fx.jwks, policyUrl: url, policy: { maxBytes: Math.max(BYTES, DEFAULT_POLICY.maxBytes), minRefreshIntervalMs: 0 } });
    const identity = await authz.authenticate(`Bearer ${tokenFor(shape.role)}`);
    const query = { service: shape.service, permission: shape.permission, resource: { type: 'VIN', value: 'WVW1' } };
    const decisions: boolean[] = [];
    const cold = await stallOf(async () => { decisions.push((await authz.authorize(identity, query)).granted); });
    if (decisions[0] !== true) throw new Error('the policy did not grant what it should: the bench measures nothing');
    console.log(`${''.padEnd(32)} ${'cold authorize'.padEnd(24)} ${ms(cold.max)} ${ms(cold.p99)} ${ms(cold.wall)}  ${cold.gcCount} (${cold.gcMax.toFixed(1)} ms)`);
    // A denial refetches (minRefreshIntervalMs 0): the same bytes are hashed and not parsed again.
    const refetch = await stallOf(async () => authz.authorize(identity, { ...query, permission: 'NOT-GRANTED' }));
    console.log(`${''.padEnd(32)} ${'denial refetch, same'.padEnd(24)} ${ms(refetch.max)} ${ms(refetch.p99)} ${ms(refetch.wall)}  ${refetch.gcCount} (${refetch.gcMax.toFixed(1)} ms)`);
    await authz.close();
  }
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
}
