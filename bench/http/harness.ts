/**
 * What the HTTP benchmarks share (`bench/http/run.ts`, `bench/ceiling/run.ts`): the development IAM
 * on loopback with pre-minted tokens, one server process per kind (`server.ts`), its CPU time, and
 * an autocannon load with one repeated token or the request's own token from a pool.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import type { ServerKind } from './kinds.js';

export const TENANT = 'tenant-1';

/** The example's IAM configuration, which the benchmark's development IAM serves. */
export const IAM_CONFIG = fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url));

export interface BenchIam {
  iam: DevIam;
  /** The environment `server.ts` reads. */
  env: Record<string, string>;
  /** The IAM's signing key, public half, made once. */
  publicKey: KeyObject;
  /** One token, reused by every request of the `repeated` workload. */
  repeated: string;
  /** `count` distinct valid tokens (each a fresh RSA signature), for the `distinct` workload. */
  distinct: string[];
}

/**
 * Starts the development IAM of the example service and mints `count` distinct tokens (≈ 1 ms each);
 * `beforeMinting(env)` is called first, e.g. to fork the servers while the tokens are signed.
 */
export async function startBenchIam(count: number, beforeMinting?: (env: Record<string, string>) => void): Promise<BenchIam> {
  const iam = await startDevIam({ config: IAM_CONFIG });
  const jwks = await (await fetch(`${iam.issuer}/.well-known/jwks.json`)).json() as { keys: Record<string, string>[] };
  const publicKey = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const mint = (): string => iam.mintToken({ actor: 'actor-alice', tenantId: TENANT, expiryInSecs: 3 * 3600 });
  const env = { IAM_BASE_URL: iam.baseUrl, IAM_ISSUER: iam.issuer, IAM_PUBLIC_PEM: publicPem, TENANT };
  beforeMinting?.(env);
  return {
    iam,
    env,
    publicKey,
    repeated: mint(),
    distinct: Array.from({ length: count }, mint),
  };
}

export interface Server { kind: ServerKind; child: ChildProcess; url: string }

/** Forks `server.ts <kind>` (with `nodeFlags` before tsx, e.g. `--cpu-prof`) and waits for its port. */
export async function startServer(kind: ServerKind, env: Record<string, string>, nodeFlags: readonly string[] = []): Promise<Server> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [kind], {
    execArgv: [...nodeFlags, '--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => { resolve((m as { port: number }).port); });
    child.once('exit', (code) => { reject(new Error(`${kind} exited with ${code}`)); });
  });
  return { kind, child, url: `http://127.0.0.1:${port}` };
}

/** The server process's CPU time so far (user + system), microseconds. */
export function cpuOf(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (m) => {
      const { user, system } = (m as { cpu: NodeJS.CpuUsage }).cpu;
      resolve(user + system);
    });
    server.child.send('cpu');
  });
}

/** Asks the server to exit normally (so `--cpu-prof` writes its profile) and waits for it. */
export function stopServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.child.once('exit', () => { resolve(); });
    server.child.send('exit');
  });
}

export type Workload = 'repeated' | 'distinct';

/** `GET /vehicle/WVW1` for `seconds` on `connections` connections; `distinct` cycles through the pool, one token per request. */
export function load(url: string, tokens: BenchIam, workload: Workload, seconds: number, connections: number): Promise<autocannon.Result> {
  let next = 0;
  const { repeated, distinct } = tokens;
  const request: autocannon.Request = workload === 'repeated'
    ? { method: 'GET', path: '/vehicle/WVW1', headers: { authorization: `Bearer ${repeated}` } }
    : {
        method: 'GET',
        path: '/vehicle/WVW1',
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${distinct[next++ % distinct.length] as string}` } }),
      };
  return autocannon({ url, connections, duration: seconds, requests: [request] });
}

export interface Sample { rps: number; p50: number; p99: number; cpuUsPerReq: number; non2xx: number }

/** A warm-up load of `warmup` s (not counted), then a measured one of `duration` s. */
export async function measureServer(server: Server, tokens: BenchIam, workload: Workload, warmup: number, duration: number, connections: number): Promise<Sample> {
  if (warmup > 0) await load(server.url, tokens, workload, warmup, connections);
  const before = await cpuOf(server);
  const result = await load(server.url, tokens, workload, duration, connections);
  const cpu = (await cpuOf(server)) - before;
  return {
    rps: result.requests.total / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerReq: cpu / Math.max(1, result.requests.total),
    non2xx: result.non2xx + result.errors,
  };
}

