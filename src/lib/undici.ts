/**
 * undici, loaded on first use: it is about two thirds of what `import('iam-authz')` costs, and a
 * service pays it when its first request needs the network (a JWKS or policy fetch), not at start.
 */
import type { Dispatcher } from 'undici';
import type { RawAnswer, SendOptions, Transport } from './transport.js';

type Undici = typeof import('undici');

let loaded: Undici | undefined;
let loading: Promise<Undici> | undefined;

/** The undici module, imported once. */
export function loadUndici(): Promise<Undici> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= import('undici').then((mod) => (loaded = mod));
  return loading;
}

/** undici's own idle keep-alive default (ms), the floor of ours. */
const UNDICI_KEEP_ALIVE_MS = 4_000;
/** Longest idle keep-alive (ms), and the longest a server's `Keep-Alive: timeout` hint is believed. */
const MAX_KEEP_ALIVE_MS = 600_000;
/** Margin (ms) past the longest TTL: a refresh is due within the TTL, and driven by traffic. */
const KEEP_ALIVE_MARGIN_MS = 30_000;
/** Connections per origin: the caches fetch one thing at a time per issuer and application. */
const CONNECTIONS_PER_ORIGIN = 4;

/**
 * The Agent options of the default dispatcher for caches refreshed every `ttlMs` (the longest of
 * them): an idle connection is kept past the refresh cadence, so that steady-state refreshes reuse
 * it instead of a new TCP (and TLS) handshake each time; at most 10 min, at most 4 per origin.
 * A server closing it first is harmless: a GET on a socket closed under it is retried once.
 */
export function keepAliveOptions(ttlMs: number): { keepAliveTimeout: number; keepAliveMaxTimeout: number; connections: number } {
  const keepAliveTimeout = Math.max(UNDICI_KEEP_ALIVE_MS, Math.min(ttlMs + KEEP_ALIVE_MARGIN_MS, MAX_KEEP_ALIVE_MS));
  return { keepAliveTimeout, keepAliveMaxTimeout: MAX_KEEP_ALIVE_MS, connections: CONNECTIONS_PER_ORIGIN };
}

/**
 * The default dispatcher: an `EnvHttpProxyAgent` (honours `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`)
 * made on the first request, with {@link keepAliveOptions}. undici's `request()` calls only
 * `dispatch`, and by then {@link loadUndici} has resolved, because that is where `request` comes from.
 */
export class LazyProxyAgent {
  #agent: Dispatcher | undefined;
  readonly #ttlMs: number | undefined;

  /** `ttlMs`: the longest TTL of the caches this agent serves; without it, undici's defaults. */
  constructor(ttlMs?: number) {
    this.#ttlMs = ttlMs;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (!loaded) throw new Error('LazyProxyAgent used before undici was loaded');
    this.#agent ??= new loaded.EnvHttpProxyAgent(this.#ttlMs === undefined ? undefined : keepAliveOptions(this.#ttlMs));
    return this.#agent.dispatch(options, handler);
  }

  /** Closes the agent, if one was made. */
  async close(): Promise<void> {
    await this.#agent?.close();
  }
}

/** A dispatcher made on first use, typed as the `Dispatcher` it stands in for. */
export function lazyProxyAgent(ttlMs?: number): Dispatcher {
  return new LazyProxyAgent(ttlMs) as unknown as Dispatcher;
}

/**
 * undici's redirect interceptor honours a per-request `maxRedirections`, and 0 turns it off: a
 * dispatcher the user composed with `interceptors.redirect()` would otherwise follow a 3xx to
 * another host before the check in `upstream.ts` ever sees it. Not in undici's request types, hence a spread.
 */
const NO_REDIRECTS = { maxRedirections: 0 } as object;

/** undici codes of a connection the peer closed or reset under a request. */
const STALE_SOCKET_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);

function isStaleSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STALE_SOCKET_CODES.has(code);
}

/** undici's `request()` through the configured dispatcher (Node.js, Bun, Deno). */
export const undiciTransport: Transport = {
  name: 'undici',
  async load() {
    await loadUndici();
  },
  async send(url: string, options: SendOptions, signal: AbortSignal): Promise<RawAnswer> {
    const { request } = await loadUndici();
    const send = (): Promise<Dispatcher.ResponseData> => request(url, {
      method: options.method,
      headers: options.headers,
      ...(options.body === undefined ? {} : { body: options.body }),
      dispatcher: options.dispatcher,
      signal,
      ...NO_REDIRECTS,
    });
    let res: Dispatcher.ResponseData;
    try {
      res = await send();
    } catch (error) {
      // A pooled keep-alive socket the server closed before answering fails the request before any
      // response byte. A GET is idempotent: retry it once (undici drops the dead socket, so the
      // retry goes out on another connection); a second failure is an outage. Never a POST, never
      // a timeout or an abort, never more than once.
      if (options.method !== 'GET' || signal.aborted || !isStaleSocketError(error)) throw error;
      res = await send();
    }
    const { body } = res;
    // Destroying a body before its end emits an abort error; without a listener that error is an
    // uncaught exception (an IAM answering 500 would crash the process). Readers still see errors.
    body.on('error', () => undefined);
    return { statusCode: res.statusCode, headers: res.headers, body, discard: () => { body.destroy(); } };
  },
};
