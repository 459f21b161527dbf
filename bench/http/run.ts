/**
 * `npm run bench:http`: autocannon against real servers on 127.0.0.1 — Fastify and Express, each
 * bare, guarded by iam-authz, and guarded by the peers (@fastify/jwt with its cache,
 * express-oauth2-jwt-bearer, express-jwt + jwks-rsa) — under two workloads: one repeated token,
 * and `--tokens` distinct valid tokens. Rounds are interleaved (A B C … A B C …), every measurement
 * follows a warm-up of its own, and each server runs in its own process so that its CPU time per
 * request can be read with `process.cpuUsage()`. Prints median and min–max per server.
 *
 * Flags: --rounds 3, --duration 5 (s), --warmup 1 (s), --connections 10, --tokens 10000,
 * --only kind,kind (see KINDS in server.ts), --workloads repeated,distinct.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startDevIam } from '../../src/testing/index.js';
import { KINDS, type ServerKind } from './kinds.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '10' },
    tokens: { type: 'string', default: '10000' },
    only: { type: 'string', default: KINDS.join(',') },
    workloads: { type: 'string', default: 'repeated,distinct' },
  },
});
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
const tokenCount = Number(values.tokens);
const kinds = values.only.split(',') as ServerKind[];
const workloads = values.workloads.split(',') as ('repeated' | 'distinct')[];
for (const kind of kinds) if (!KINDS.includes(kind)) throw new TypeError(`unknown server kind ${kind} (${KINDS.join(', ')})`);

const TENANT = 'tenant-1';
const iam = await startDevIam({ config: fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url)) });
const jwks = await (await fetch(`${iam.issuer}/.well-known/jwks.json`)).json() as { keys: Record<string, string>[] };
const publicPem = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();

console.error(`signing ${tokenCount} distinct tokens…`);
const repeated = iam.mintToken({ actor: 'actor-alice', tenantId: TENANT });
const distinct = Array.from({ length: tokenCount }, () => iam.mintToken({ actor: 'actor-alice', tenantId: TENANT }));

interface Server { kind: ServerKind; child: ChildProcess; url: string }

async function startServer(kind: ServerKind): Promise<Server> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [kind], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, IAM_BASE_URL: iam.baseUrl, IAM_ISSUER: iam.issuer, IAM_PUBLIC_PEM: publicPem, TENANT },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => { resolve((m as { port: number }).port); });
    child.once('exit', (code) => { reject(new Error(`${kind} exited with ${code}`)); });
  });
  return { kind, child, url: `http://127.0.0.1:${port}` };
}

function cpuOf(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (m) => {
      const { user, system } = (m as { cpu: NodeJS.CpuUsage }).cpu;
      resolve(user + system);
    });
    server.child.send('cpu');
  });
}

function load(url: string, workload: 'repeated' | 'distinct', seconds: number): Promise<autocannon.Result> {
  let next = 0;
  const request: autocannon.Request = workload === 'repeated'
    ? { method: 'GET', path: '/vehicle/WVW1', headers: { authorization: `Bearer ${repeated}` } }
    : {
        method: 'GET',
        path: '/vehicle/WVW1',
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${distinct[next++ % distinct.length] as string}` } }),
      };
  return autocannon({ url, connections, duration: seconds, requests: [request] });
}

interface Sample { rps: number; p50: number; p99: number; cpuUsPerReq: number; non2xx: number }
const samples = new Map<string, Sample[]>();
const servers: Server[] = [];
for (const kind of kinds) servers.push(await startServer(kind));

for (const workload of workloads) {
  for (let round = 1; round <= rounds; round++) {
    for (const server of servers) {
      await load(server.url, workload, warmup);
      const before = await cpuOf(server);
      const result = await load(server.url, workload, duration);
      const cpu = (await cpuOf(server)) - before;
      const sample = {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        cpuUsPerReq: cpu / Math.max(1, result.requests.total),
        non2xx: result.non2xx + result.errors,
      };
      const key = `${workload}/${server.kind}`;
      samples.set(key, [...(samples.get(key) ?? []), sample]);
      console.error(`${workload} round ${round} ${server.kind}: ${sample.rps.toFixed(0)} req/s, p99 ${sample.p99} ms, ${sample.cpuUsPerReq.toFixed(1)} µs CPU/req${sample.non2xx ? `, ${sample.non2xx} non-2xx/errors` : ''}`);
    }
  }
}

for (const server of servers) server.child.kill();
await iam.close();

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const spread = (xs: number[], digits = 0): string => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

console.log(`\n${rounds} interleaved rounds of ${duration} s after ${warmup} s warm-up each, ${connections} connections, Node ${process.version}; median (min–max)\n`);
for (const workload of workloads) {
  console.log(`### ${workload === 'repeated' ? 'One repeated token' : `${tokenCount} distinct tokens`}\n`);
  console.log('| server | req/s | p50 ms | p99 ms | server CPU µs/req | non-2xx |');
  console.log('|---|---|---|---|---|---|');
  for (const kind of kinds) {
    const s = samples.get(`${workload}/${kind}`) ?? [];
    console.log(`| ${kind} | ${spread(s.map((x) => x.rps))} | ${spread(s.map((x) => x.p50))} | ${spread(s.map((x) => x.p99))} | ${spread(s.map((x) => x.cpuUsPerReq), 1)} | ${s.reduce((n, x) => n + x.non2xx, 0)} |`);
  }
  const rps = (kind: ServerKind): number | undefined => {
    const s = samples.get(`${workload}/${kind}`);
    return s ? median(s.map((x) => x.rps)) : undefined;
  };
  const ratio = (a: ServerKind, b: ServerKind[]): string => {
    const mine = rps(a);
    const best = Math.max(...b.map(rps).filter((x): x is number => x !== undefined));
    return mine === undefined || !Number.isFinite(best) ? 'n/a' : (mine / best).toFixed(2);
  };
  console.log('');
  console.log(`- Fastify: iam-authz / @fastify/jwt = ${ratio('fastify-iam', ['fastify-jwt'])}; iam-authz / bare = ${ratio('fastify-iam', ['fastify-bare'])}`);
  console.log(`- Express: iam-authz / best peer = ${ratio('express-iam', ['express-oauth2-jwt-bearer', 'express-jwt'])}; iam-authz / bare = ${ratio('express-iam', ['express-bare'])}\n`);
}
