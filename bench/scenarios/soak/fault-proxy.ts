/**
 * A fault-injecting reverse proxy in front of the development IAM, on 127.0.0.1. The soak flips its
 * modes to make the JWKS and the policy API fail, stall, answer garbage or publish a replaced key,
 * and it refuses the policy requests of one chosen subject (as an IAM does for a revoked user).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** What the JWKS endpoint does now. */
export type JwksMode = 'ok' | 'error' | 'slow' | 'garbage' | 'replaced';
/** What the policy API does now. */
export type PolicyMode = 'ok' | 'error' | 'slow' | 'garbage' | 'wrong-app';

/** Text planted in every garbage body: it must never reach an error, a cause or an event. */
export const UPSTREAM_MARKER = 'SOAK-UPSTREAM-SECRET';

export interface FaultProxyOptions {
  /** The development IAM's base URL. */
  target: string;
  /** The JWK Set served in `replaced` mode (a different key under the IAM's current kid). */
  replacedJwks: () => object;
  /** Subject whose policy requests are refused with 401. */
  refusedSubject: string;
  /** How long `slow` answers stall, in ms (longer than the authorizer's timeouts). */
  stallMs: number;
}

export interface FaultProxy {
  url: string;
  jwks: JwksMode;
  policy: PolicyMode;
  /** Requests seen, per path kind. */
  readonly counts: { jwks: number; policy: number; refused: number };
  close(): Promise<void>;
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const counts = { jwks: 0, policy: 0, refused: 0 };
  const stalled = new Set<ServerResponse>();
  const proxy: FaultProxy = { url: '', jwks: 'ok', policy: 'ok', counts, close };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    if (path.endsWith('/.well-known/jwks.json')) {
      counts.jwks++;
      const mode = proxy.jwks;
      if (mode === 'replaced') { json(res, 200, options.replacedJwks()); return; }
      if (mode !== 'ok') { fault(res, mode); return; }
    } else if (path.startsWith('/policy/')) {
      counts.policy++;
      if (subjectOf(req.headers.authorization) === options.refusedSubject) {
        counts.refused++;
        json(res, 401, { title: 'Unauthorized', detail: `token revoked ${UPSTREAM_MARKER}` });
        return;
      }
      const mode = proxy.policy;
      if (mode === 'wrong-app') { json(res, 200, { applicationId: 'someone-else', changeId: UPSTREAM_MARKER, roles: [] }); return; }
      if (mode !== 'ok') { fault(res, mode); return; }
    }
    await forward(req, res);
  }

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'accept', 'if-none-match']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await request(`${options.target}${req.url ?? '/'}`, { method: 'GET', headers });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    const out: Record<string, string> = {};
    for (const name of ['content-type', 'etag', 'cache-control']) {
      const value = upstream.headers[name];
      if (typeof value === 'string') out[name] = value;
    }
    res.writeHead(upstream.statusCode, out).end(body);
  }

  function fault(res: ServerResponse, mode: 'error' | 'slow' | 'garbage'): void {
    if (mode === 'error') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream exploded ${UPSTREAM_MARKER}`);
    } else if (mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"keys": [ ${UPSTREAM_MARKER}`);
    } else {
      stalled.add(res);
      const timer = setTimeout(() => {
        stalled.delete(res);
        res.writeHead(500).end();
      }, options.stallMs);
      res.once('close', () => {
        clearTimeout(timer);
        stalled.delete(res);
      });
    }
  }

  async function close(): Promise<void> {
    for (const res of stalled) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => { resolve(); });
  });
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The `sub` of a bearer token, read without verification: the proxy only needs to pick a victim. */
function subjectOf(authorization: string | undefined): string | undefined {
  const payload = authorization?.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
