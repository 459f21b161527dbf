/**
 * `iam-authz/fetch`: guards for WHATWG `Request`/`Response` runtimes (Next.js route handlers and
 * middleware, Bun.serve, Deno.serve, undici/Node servers). A guard resolves with the state, or
 * with a ready problem+json `Response` to return as is. A thin shim over the core's
 * framework-neutral guards; it reaches no internals but the adapters' entry.
 */
import type { Authorizer, IamAuthzError, IamState } from '../../src/index.js';
import { toResponse, wrapGuards, type AuthenticateOptions, type Guard, type GuardFactory, type GuardOptions } from '../../src/adapter/index.js';
import { closerOf, closeWithBody, closeWithRequest, createInternalGuards, withSignal } from '../../src/adapter/internal.js';

/** Options of {@link createFetchGuards}: the options every adapter shares, and `onError`. */
export interface FetchAuthzOptions extends GuardOptions {
  /** Renders 401/403/503 yourself; anything but a `Response` returned → the default answer. Not with `passErrors`. Default: none. */
  onError?: (error: IamAuthzError, request: Request) => Response | Promise<Response>;
}

/** Resolves with the caller's state, or with the refusal `Response` (401/403/503) to return as is. */
export type FetchGuard<R extends Request = Request> = (request: R) => Promise<IamState | Response>;

/** As {@link FetchGuard}, and `undefined` for a request without `Authorization` (`authenticate({ optional: true })`). */
export type OptionalFetchGuard<R extends Request = Request> = (request: R) => Promise<IamState | Response | undefined>;

/** `{ authenticate(), requirePermission(service, permission, type, resolve) | (…, { node: resolve }) }` over `Request`s. */
export interface FetchAuthz<R extends Request = Request> extends Omit<GuardFactory<R, FetchGuard<R>>, 'authenticate'> {
  /** A guard that verifies the bearer token. */
  authenticate(): FetchGuard<R>;
  /** With `optional: true`, a request without `Authorization` resolves with `undefined` (anonymous). */
  authenticate(options: AuthenticateOptions): OptionalFetchGuard<R>;
  /** The refusal `Response` for an `IamAuthzError` (for errors you catch yourself, e.g. from `authorizer.authorize`). */
  errorResponse(error: IamAuthzError, request?: Request): Response;
  /**
   * `response`, to return from the handler, with the watch behind `state.signal` (if it was read)
   * closed when its body has been sent or given up; `response` itself when the signal was never
   * read. Without it the watch closes when the request's `signal` aborts, or at the token's `exp`.
   */
  respond(state: IamState | undefined, response: Response): Response;
}

/**
 * Guards over `authorizer` for Fetch-API runtimes: 401/403/503 as RFC 6750 challenges with
 * problem+json bodies, the same as the Express, Koa and Fastify adapters. Throws a `TypeError`
 * for an invalid option.
 */
export function createFetchGuards<R extends Request = Request>(authorizer: Authorizer, options: FetchAuthzOptions = {}): FetchAuthz<R> {
  const guards = createInternalGuards<R>(authorizer, options, 'createFetchGuards', ['onError']);
  const { onError } = options;

  const errorResponse = (error: IamAuthzError, request?: Request): Response => toResponse(guards.errorResponse(error), request?.method);

  function fetchGuard(guard: Guard<R>): OptionalFetchGuard<R> {
    return async function iamAuthzGuard(request: R): Promise<IamState | Response | undefined> {
      // Mounted as another framework's middleware (Hono passes (c, next)): answer 500 there.
      if (typeof (request as Partial<Request> | undefined)?.headers?.get !== 'function') {
        // eslint-disable-next-line prefer-rest-params -- exactly what the other framework passed
        return guards.answerWrongFramework('fetch', Array.from(arguments)) as Response | undefined;
      }
      try {
        return withSignal(authorizer, await guard(request.headers.get('authorization') ?? undefined, request), request, closeWithRequest);
      } catch (error) {
        const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, request)), (returned) => returned instanceof Response);
        if (refusal.action === 'pass') throw refusal.error;
        return refusal.action === 'answer' ? toResponse(refusal.answer, request.method) : refusal.returned as Response;
      }
    };
  }

  // Only an optional authenticate() resolves with undefined; the other guards always have a state.
  function respond(state: IamState | undefined, response: Response): Response {
    const close = closerOf(state);
    return close ? closeWithBody(response, close) : response;
  }

  return { ...(wrapGuards(guards, fetchGuard) as unknown as Omit<FetchAuthz<R>, 'errorResponse' | 'respond'>), errorResponse, respond };
}
