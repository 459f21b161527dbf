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
import { parseArgs } from 'node:util';
import { median, spread } from '../lib/stats.mjs';
import { measureServer, startBenchIam, startServer, type Sample, type Server } from './harness.js';
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

console.error(`signing ${tokenCount} distinct tokens…`);
const tokens = await startBenchIam(tokenCount);

const samples = new Map<string, Sample[]>();
const servers: Server[] = [];
for (const kind of kinds) servers.push(await startServer(kind, tokens.env));

for (const workload of workloads) {
  for (let round = 1; round <= rounds; round++) {
    for (const server of servers) {
      const sample = await measureServer(server, tokens, workload, warmup, duration, connections);
      const key = `${workload}/${server.kind}`;
      samples.set(key, [...(samples.get(key) ?? []), sample]);
      console.error(`${workload} round ${round} ${server.kind}: ${sample.rps.toFixed(0)} req/s, p99 ${sample.p99} ms, ${sample.cpuUsPerReq.toFixed(1)} µs CPU/req${sample.non2xx ? `, ${sample.non2xx} non-2xx/errors` : ''}`);
    }
  }
}

for (const server of servers) server.child.kill();
await tokens.iam.close();

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
