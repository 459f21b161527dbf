/**
 * The fleet benchmark's IAM: one loopback HTTP server serving a JWKS and a role policy to every
 * replica, each under its own path prefix (`/r/<replica>/…`) so that requests can be told apart,
 * and counting every request: when, what, which replica, on which TCP connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RolePolicy } from '../../../src/types.js';

export interface Hit {
  /** ms since the server started. */
  readonly t: number;
  readonly kind: 'jwks' | 'policy';
  readonly replica: number;
  /** How many requests this TCP connection carried before this one. */
  readonly onSocket: number;
  readonly status: number;
}

export interface CountingServer {
  readonly url: string;
  readonly hits: Hit[];
  /** ms since the server started. */
  now(): number;
  jwks: { keys: Record<string, string>[] };
  policy: RolePolicy;
  /** Until this time (server ms), answer 503 with `Retry-After: retryAfterSec` (none when `undefined`). */
  outageUntil: number;
  retryAfterSec: number | undefined;
  close(): Promise<void>;
}

export async function startCountingServer(jwks: CountingServer['jwks'], policy: RolePolicy): Promise<CountingServer> {
  const started = performance.now();
  const perSocket = new WeakMap<Socket, number>();
  const sockets = new Set<Socket>();
  const state: CountingServer = {
    url: '',
    hits: [],
    now: () => performance.now() - started,
    jwks,
    policy,
    outageUntil: 0,
    retryAfterSec: 3,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    },
  };
  const server: Server = createServer((req, res) => {
    const match = /^\/r\/(\d+)\/(jwks\.json|policy)$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const kind = match[2] === 'jwks.json' ? 'jwks' : 'policy';
    const onSocket = perSocket.get(req.socket) ?? 0;
    perSocket.set(req.socket, onSocket + 1);
    const t = state.now();
    let status: number;
    let body = '';
    const headers: Record<string, string> = {};
    if (t < state.outageUntil) {
      status = 503;
      if (state.retryAfterSec !== undefined) headers['retry-after'] = String(state.retryAfterSec);
    } else if (kind === 'jwks') {
      status = 200;
      body = JSON.stringify(state.jwks);
      headers['content-type'] = 'application/json';
    } else {
      const etag = `"${state.policy.changeId}"`;
      headers.etag = etag;
      if (req.headers['if-none-match'] === etag) {
        status = 304;
      } else {
        status = 200;
        body = JSON.stringify(state.policy);
        headers['content-type'] = 'application/json';
      }
    }
    state.hits.push({ t, kind, replica: Number(match[1]), onSocket, status });
    res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) }).end(body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.maxConnections = 10_000;
  // An IAM that keeps idle connections and advertises no timeout (Node's default closes them after 5 s).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 4096, resolve));
  Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return state;
}
