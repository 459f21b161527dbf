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

/**
 * The default dispatcher: an `EnvHttpProxyAgent` (honours `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`)
 * made on the first request. undici's `request()` calls only `dispatch`, and by then
 * {@link loadUndici} has resolved, because that is where `request` comes from.
 */
export class LazyProxyAgent {
  #agent: Dispatcher | undefined;

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (!loaded) throw new Error('LazyProxyAgent used before undici was loaded');
    this.#agent ??= new loaded.EnvHttpProxyAgent();
    return this.#agent.dispatch(options, handler);
  }

  /** Closes the agent, if one was made. */
  async close(): Promise<void> {
    await this.#agent?.close();
  }
}

/** A dispatcher made on first use, typed as the `Dispatcher` it stands in for. */
export function lazyProxyAgent(): Dispatcher {
  return new LazyProxyAgent() as unknown as Dispatcher;
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
