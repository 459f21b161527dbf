/**
 * The state the library's adapters attach to a request: a guard's state, plus `signal`, the watch
 * of the request's own grant, made on first read. A route that never reads it pays one small
 * object: no watch, no timer, no `AbortController`, no listener. On first read the watch is made
 * at once (the guard has just granted: no decision again) and the adapter's `onEnd` ties its
 * `close()` to the end of the response, so a finished request leaves nothing behind.
 */
import type { AuthorizeQuery, Authorizer } from '../authorizer.js';
import type { Decision, IamClaims, IamState } from '../types.js';
import { watchGrantedOf, type Watch } from '../watch/watcher.js';

/** The queries a guard granted, per state it resolved with; none (a watch of the token alone) when absent. */
const GRANTED = new WeakMap<IamState, readonly AuthorizeQuery[]>();

/** Records that `state` stands for a grant of `queries` (what its `signal` watches); returns `state`. */
export function grantedQueries<S extends IamState>(state: S, queries: readonly AuthorizeQuery[]): S {
  GRANTED.set(state, queries);
  return state;
}

/**
 * How an adapter ties a watch to the end of its response: called once, on the first read of
 * `signal`, with the adapter's `target` (the Node response, the `Request`, …) and the watch's close.
 */
export type OnEnd<T> = (target: T, close: () => void) => void;

/** For Node's `http.ServerResponse` (Express, Koa, Fastify): the watch closes on its `'close'`. */
export const closeWithNodeResponse: OnEnd<{ readonly destroyed?: boolean; once(event: 'close', listener: () => void): unknown }> = (res, close) => {
  // Read after the response is gone (from a late callback): nothing left to watch.
  if (res.destroyed === true) close();
  else res.once('close', close);
};

/** For a Fetch-API `Request`: the watch closes when its `signal` aborts (the client went away). */
export const closeWithRequest: OnEnd<Request> = (request, close) => {
  if (request.signal.aborted) close();
  else request.signal.addEventListener('abort', close, { once: true });
};

class RequestState<T> implements IamState {
  readonly token: string;
  readonly claims: IamClaims;
  declare readonly decision?: Decision;
  declare readonly decisions?: readonly Decision[];
  declare readonly shadow?: boolean;
  readonly #guarded: IamState;
  readonly #authorizer: Authorizer;
  readonly #target: T;
  readonly #onEnd: OnEnd<T>;
  #signal: AbortSignal | undefined;
  #watch: Watch | undefined;

  constructor(guarded: IamState, authorizer: Authorizer, target: T, onEnd: OnEnd<T>) {
    this.token = guarded.token;
    this.claims = guarded.claims;
    const self = this as { decision?: Decision; decisions?: readonly Decision[]; shadow?: boolean };
    if (guarded.decision !== undefined) self.decision = guarded.decision;
    if (guarded.decisions !== undefined) self.decisions = guarded.decisions;
    if (guarded.shadow !== undefined) self.shadow = guarded.shadow;
    this.#guarded = guarded;
    this.#authorizer = authorizer;
    this.#target = target;
    this.#onEnd = onEnd;
  }

  get signal(): AbortSignal {
    return this.#signal ??= this.#watchNow();
  }

  /** The close of the watch behind `state`'s signal once it has been read; `undefined` before. */
  static closerOf(state: object): (() => void) | undefined {
    const watch = #watch in state ? state.#watch : undefined;
    return watch && (() => { watch.close(); });
  }

  #watchNow(): AbortSignal {
    const watchGranted = watchGrantedOf(this.#authorizer);
    // An authorizer not made by createAuthorizer (a test double): nothing watches, nothing aborts.
    if (watchGranted === undefined) return new AbortController().signal;
    try {
      this.#watch = watchGranted({ token: this.token, claims: this.claims }, GRANTED.get(this.#guarded) ?? []);
    } catch (error) {
      // No longer true by the time it is read (expired, revoked, denied now, closed): aborted already.
      return AbortSignal.abort(error);
    }
    const watch = this.#watch;
    this.#onEnd(this.#target, () => { watch.close(); });
    return watch.signal;
  }
}

/** The state to attach for a guard's `state` (none for an anonymous request), its `signal` made on first read. */
export function withSignal<T>(authorizer: Authorizer, state: IamState, target: T, onEnd: OnEnd<T>): IamState;
export function withSignal<T>(authorizer: Authorizer, state: IamState | undefined, target: T, onEnd: OnEnd<T>): IamState | undefined;
export function withSignal<T>(authorizer: Authorizer, state: IamState | undefined, target: T, onEnd: OnEnd<T>): IamState | undefined {
  return state && new RequestState(state, authorizer, target, onEnd);
}

/** The close of the watch behind `state`'s signal, once it has been read; `undefined` otherwise. */
export function closerOf(state: IamState | undefined): (() => void) | undefined {
  return state && RequestState.closerOf(state);
}

/**
 * `response`, its watch closed when its body has been sent or given up (or at once without a body):
 * for a handler whose `Response` outlives the middleware (a stream). The body passes unchanged.
 */
export function closeWithBody(response: Response, close: () => void): Response {
  if (response.body === null) {
    close();
    return response;
  }
  // `cancel`: the client went away mid-stream (a transformer's `cancel` is newer than its types).
  const transformer = { flush: close, cancel: close };
  const body = response.body.pipeThrough(new TransformStream(transformer));
  return new Response(body, response);
}
