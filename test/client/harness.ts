/**
 * Test support for the token client: a real loopback token endpoint (spec §4.1) that records every
 * request with its body and signs tokens whose `exp - iat = expiryInSecs`, and a counting `idpToken`
 * callback; {@link useTokenServer} registers a test file's hooks around them.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { IamTokenClient, type IamTokenClientOptions } from '../../src/client/index.js';
import { Clock, NOW_MS } from '../helpers/clock.js';
import { defined } from '../helpers/hooks.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { claims, signClaims, STATIC_KEY } from '../helpers/tokens.js';

export const TOKEN_PATH = '/authentication/v1/tokens';

export interface SeenRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

export type TokenHandler = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

export interface TokenServer {
  url: string;
  seen: SeenRequest[];
  /** Replaces the default (a valid token) answer; `undefined` restores it. */
  handler: TokenHandler | undefined;
  /** Waits this long (ms) before answering. */
  delayMs: number;
  close(): Promise<void>;
}

/**
 * Signs a §2.2 IAM token for `tenantId` at `iatSec`: the standard claims (test/helpers/tokens.ts) of
 * issuer http://iam.test, with a unique `jti` and DRIVER on node-1.
 */
export function issue(tenantId: string, expiryInSecs: number, iatSec: number, extra: Record<string, unknown> = {}): string {
  return signClaims(claims('http://iam.test', {
    jti: `jti-${tenantId}-${iatSec}-${Math.random().toString(36).slice(2)}`,
    aud: tenantId,
    tid: tenantId,
    iat: iatSec,
    exp: iatSec + expiryInSecs,
    ars: [{ r: ['DRIVER'], n: ['node-1'] }],
    ...extra,
  }), STATIC_KEY);
}

export function decodePayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

/** A token endpoint on loopback; by default answers 200 `application/jwt` with a fresh token. */
export async function startTokenServer(clock: Clock): Promise<TokenServer> {
  const state: TokenServer = {
    url: '',
    seen: [],
    handler: undefined,
    delayMs: 0,
    close: async () => { await lb.close(); },
  };
  const lb: Loopback = await startLoopback(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen: SeenRequest = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    state.seen.push(seen);
    if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.handler) {
      await state.handler(seen, res);
      return;
    }
    const { tenantId, expiryInSecs } = JSON.parse(seen.body) as { tenantId: string; expiryInSecs: number };
    const token = issue(tenantId, expiryInSecs, clock.sec);
    res.writeHead(200, { 'content-type': 'application/jwt', 'content-length': Buffer.byteLength(token) });
    res.end(token);
  });
  state.url = lb.url;
  return state;
}

/** An `idpToken` callback that counts its calls and answers `idp-token-<n>`, after an optional delay. */
export function countingIdp(delayMs = 0): { idpToken: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    idpToken: async () => {
      calls += 1;
      const n = calls;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return `idp-token-${n}`;
    },
  };
}

/** Clients made in a test, closed after it. */
export class Clients {
  readonly #all: IamTokenClient[] = [];
  make(options: IamTokenClientOptions): IamTokenClient {
    const client = new IamTokenClient(options);
    this.#all.push(client);
    return client;
  }
  async closeAll(): Promise<void> {
    await Promise.all(this.#all.splice(0).map((c) => c.close()));
  }
}

/** Awaits a rejection and checks it is a TokenExchangeError with `status`; returns it. */
export async function expectExchangeError(promise: Promise<unknown>, status: number): Promise<Error & { status: number; code: string }> {
  const error = await promise.then(
    () => { throw new Error('expected a rejection'); },
    (e: unknown) => e as Error & { status: number; code: string },
  );
  expect(error).toMatchObject({ name: 'TokenExchangeError', code: 'ERR_TOKEN_EXCHANGE_FAILED', status });
  return error;
}

/** What {@link useTokenServer} gives a test file. */
export interface TokenServerContext {
  /** The file's token endpoint; reset before every test (no requests seen, default answer). */
  readonly server: TokenServer;
  /** Back at `NOW_MS` before every test. */
  readonly clock: Clock;
  /** Closed after every test. */
  readonly clients: Clients;
  /** A client of {@link server} with IdP key `corp`, `idpToken` and the clock, then `extra`. */
  client(idpToken: () => Promise<string>, extra?: Partial<IamTokenClientOptions>): IamTokenClient;
}

/**
 * Registers the hooks of a token-client test file: one loopback token endpoint for the file; before
 * every test the clock back at `NOW_MS` and the endpoint reset (nothing seen, default answer,
 * `delayMs`); after every test the clients are closed.
 */
export function useTokenServer({ delayMs = 0 }: { delayMs?: number } = {}): TokenServerContext {
  const clock = new Clock();
  const clients = new Clients();
  let server: TokenServer | undefined;

  beforeAll(async () => { server = await startTokenServer(clock); });
  afterAll(() => server?.close());
  beforeEach(() => {
    clock.set(NOW_MS);
    const s = defined(server, 'server');
    s.seen.length = 0;
    s.handler = undefined;
    s.delayMs = delayMs;
  });
  afterEach(() => clients.closeAll());

  return {
    get server() { return defined(server, 'server'); },
    clock,
    clients,
    client(idpToken, extra = {}) {
      return clients.make({ baseUrl: defined(server, 'server').url, idpKey: 'corp', idpToken, now: clock.now, ...extra });
    },
  };
}
