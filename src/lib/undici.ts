/**
 * undici, loaded on first use: it is about two thirds of what `import('iam-authz')` costs, and a
 * service pays it when its first request needs the network (a JWKS or policy fetch), not at start.
 */
import type { Dispatcher } from 'undici';

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
