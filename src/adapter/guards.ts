/**
 * Framework-neutral route guards. An adapter hands over the `Authorization` header value and its
 * request object; the guard resolves with the state to attach to the request, or rejects with an
 * `IamAuthzError` (401/403/503, with `headers` ready to send) — or with whatever the resource
 * resolver threw, which the framework turns into a 500.
 */
import type { AuthorizeQuery, Authorizer } from '../authorizer.js';
import type { Decision, GuardMode, IamState, Identity } from '../types.js';
import { answerOf, checkRealm, IamAuthzError, PermissionDeniedError, withAnswerOptions, type ErrorResponse, type ErrorResponseOptions } from '../errors.js';
import { inventoryOf, type InventoryRoute } from '../inventory.js';
import { refuseNulls } from '../lib/option-checks.js';
import { fresh, settled, settledValue } from '../lib/settled.js';
import { checkMode, checkOptionsObject, parseAuthenticateOptions, parsePermissionArgs, type AuthenticateOptions, type PermissionArgs, type ResourceResolver, type RouteOptions } from './permission-args.js';
import { answerWrongFramework, type AdapterFramework } from './wrong-framework.js';

export type { AuthenticateOptions, PermissionArgs, ResourceResolver, RouteOptions };

/** Options every adapter shares. */
export interface GuardOptions {
  /** `realm` of the `WWW-Authenticate` challenge. Default `"iam"`. */
  realm?: string;
  /** Include the decision (roles, reason, changeId) in 403 bodies, and the full message in 401 bodies; for development only. Default `false`. */
  exposeDecision?: boolean;
  /** `Retry-After` (s) sent with 503 answers. Default `5`. */
  retryAfterSec?: number;
  /**
   * Hand the `IamAuthzError` (it carries its answer: `status`, `headers`, `problemDetails`,
   * `getResponse()`) to the framework's own error handling instead of answering: Express
   * `next(err)`, Koa `throw` (to upstream middleware or `app.on('error')`), Fastify the error
   * handler (`setErrorHandler`), Hono `app.onError` (its default handler renders `getResponse()`),
   * Fetch a rejected guard. Not with `onError` (a `TypeError` names both). Default `false`.
   */
  passErrors?: boolean;
  /** Mode of every permission guard of this adapter, unless a route sets its own. Default: the authorizer's `mode` (`'enforce'`). */
  mode?: GuardMode;
}

const GUARD_OPTIONS = ['realm', 'exposeDecision', 'retryAfterSec', 'passErrors', 'mode'];

/**
 * For an adapter that takes `createAuthorizer`'s options and its own in one object (NestJS's
 * module): the shared adapter options that are set (`guardOptions`, for `createGuards`, which
 * checks them) and every other member (`rest`). Options left `undefined` take their defaults.
 */
export function splitGuardOptions(options: object): {
  /** The guards' own options (`GuardOptions`), those left `undefined` dropped. */
  guardOptions: GuardOptions;
  /** Everything else, for `createAuthorizer`. */
  rest: Record<string, unknown>;
} {
  const guardOptions: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (!GUARD_OPTIONS.includes(key)) rest[key] = value;
    else if (value !== undefined) guardOptions[key] = value;
  }
  return { guardOptions, rest };
}

/**
 * A framework-neutral guard: resolves with the state to attach (`undefined` for an anonymous
 * request let through by `authenticate({ optional: true })`), or rejects with an `IamAuthzError`.
 */
export type Guard<Req> = (authorization: string | undefined, req: Req) => Promise<IamState | undefined>;

/** The framework-neutral guards an adapter wraps; from {@link createGuards}. */
export interface Guards<Req> {
  /** A guard that only verifies the token (or, with `optional`, lets a request without any `Authorization` header through). */
  authenticate(options?: AuthenticateOptions): Guard<Req>;
  /** A guard that requires `permission` in `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): Guard<Req>;
  /** A guard that requires `permission` in `service` on the node id `node(req)`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }, options?: RouteOptions): Guard<Req>;
  /** A guard that requires any one of `permissions` in `service` on `TYPE=resolve(req)` (on each resource, when several). */
  requireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): Guard<Req>;
  /** The same on node ids. */
  requireAnyPermission(service: string, permissions: readonly string[], node: { node: ResourceResolver<Req> }, options?: RouteOptions): Guard<Req>;
  /** The permission guard of arguments already checked by {@link parsePermissionArgs} (e.g. by a decorator). */
  permission(args: PermissionArgs<Req>): Guard<Req>;
  /** The HTTP answer for an `IamAuthzError` under this adapter's options (for errors caught elsewhere, e.g. from `authorizer.authorize`). */
  errorResponse(error: IamAuthzError): ErrorResponse;
  /** The `passErrors` option, resolved. */
  readonly passErrors: boolean;
  /**
   * What becomes of a guard's rejection, the same in every adapter: another error (a resolver's
   * bug) or `passErrors` → `pass` it to the framework's error handling; else `onError` runs
   * (awaited; what it throws propagates) and, unless `answered(what it returned)`, → `answer`
   * with the error's own answer. Never lets the request through.
   */
  refusal(error: unknown, onError: (() => unknown) | undefined, answered: (returned: unknown) => boolean): Promise<Refusal>;
  /**
   * For an adapter's handler called with another framework's arguments (`own`: the adapter's
   * framework; `args`: what its handler got): answers 500 `application/problem+json` in the calling
   * framework's own way, its `detail` naming the subpath to import instead; warns once per process
   * (`IAM_AUTHZ_WRONG_FRAMEWORK`). Returns what the handler should return to that framework; throws
   * a `TypeError` when the caller is no framework it recognises.
   */
  answerWrongFramework(own: AdapterFramework, args: readonly unknown[]): unknown;
  /**
   * Runs `make` and returns what it returns; the permission guards it makes are inventoried with
   * `route` (an adapter that knows where a guard sits, e.g. a NestJS handler, says so here).
   */
  at<G>(route: InventoryRoute, make: () => G): G;
}

/**
 * Builds the guards for an adapter; options are validated here (`TypeError` naming the option and
 * `adapter`). `adapterOptions` lists the adapter's own option names (e.g. `onError`), which are
 * accepted but not read here; any other unknown name is refused.
 */
export function createGuards<Req>(authorizer: Authorizer, options: GuardOptions = {}, adapter = 'createGuards', adapterOptions: readonly string[] = []): Guards<Req> {
  checkAuthorizer(adapter, authorizer);
  checkOptionsObject(adapter, 'options', options);
  for (const key of Object.keys(options)) {
    if (!GUARD_OPTIONS.includes(key) && !adapterOptions.includes(key)) throw new TypeError(`${adapter}: unknown option "${key}"`);
  }
  refuseNulls(adapter, options);
  const { onError } = options as { onError?: unknown };
  if (onError !== undefined && typeof onError !== 'function') throw new TypeError(`${adapter}: "onError" must be a function`);
  if (onError !== undefined && options.passErrors === true) {
    throw new TypeError(`${adapter}: "onError" and "passErrors" exclude each other: answer refusals in onError, or pass them to the framework's error handler`);
  }
  if (options.passErrors !== undefined && typeof options.passErrors !== 'boolean') throw new TypeError(`${adapter}: "passErrors" must be a boolean`);
  if (options.exposeDecision !== undefined && typeof options.exposeDecision !== 'boolean') throw new TypeError(`${adapter}: "exposeDecision" must be a boolean`);
  const adapterMode = checkMode(adapter, options.mode);
  const responseOptions: ErrorResponseOptions = {
    realm: options.realm === undefined ? 'iam' : checkRealm(options.realm, adapter),
    exposeDecision: options.exposeDecision === true,
    retryAfterSec: options.retryAfterSec ?? 5,
  };
  if (!Number.isSafeInteger(responseOptions.retryAfterSec) || responseOptions.retryAfterSec < 0) {
    throw new TypeError(`${adapter}: "retryAfterSec" must be a non-negative integer`);
  }

  /** Where a guard rejects: the error leaves knowing its answer under this adapter's options, for any renderer. */
  function rejected(error: unknown): never {
    if (error instanceof IamAuthzError) withAnswerOptions(error, responseOptions);
    throw error;
  }

  /** {@link rejected}, as a rejected promise. */
  function failed(error: unknown): Promise<never> {
    try {
      return rejected(error);
    } catch (thrown) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as it came
      return Promise.reject(thrown);
    }
  }

  async function refusal(error: unknown, runOnError: (() => unknown) | undefined, answered: (returned: unknown) => boolean): Promise<Refusal> {
    if (!(error instanceof IamAuthzError) || passErrors) return { action: 'pass', error };
    if (runOnError !== undefined) {
      const returned = await runOnError();
      if (answered(returned)) return { action: 'done', returned };
    }
    return { action: 'answer', answer: answerOf(withAnswerOptions(error, responseOptions)) };
  }
  const passErrors = options.passErrors === true;
  const inventory = inventoryOf(authorizer);
  /** The route of the guards being made inside `at()`. */
  let route: InventoryRoute | undefined;

  function authenticate(guardOptions?: AuthenticateOptions): Guard<Req> {
    const { optional } = parseAuthenticateOptions('authenticate', guardOptions);
    // Synchronous when the identity is at hand (a settled promise, see `settledValue`): the answer
    // is then a settled promise too, which an adapter reads without awaiting.
    return (authorization) => {
      // Only a request with no Authorization header at all is anonymous; anything present is checked.
      if (optional && authorization === undefined) return NO_STATE;
      let authenticating: Promise<Identity>;
      try {
        authenticating = authorizer.authenticate(authorization);
      } catch (error) {
        return failed(error);
      }
      const identity = settledValue(authenticating);
      return identity === undefined ? authenticatedLater(authenticating) : fresh({ token: identity.token, claims: identity.claims });
    };
  }

  async function authenticatedLater(authenticating: Promise<Identity>): Promise<IamState> {
    try {
      const { token, claims } = await authenticating;
      return { token, claims };
    } catch (error) {
      return rejected(error);
    }
  }

  function permission({ service, permissions, any, type, resolve, mode: routeMode }: PermissionArgs<Req>): Guard<Req> {
    const byNode = type === undefined;
    const asked = permissions.join(' or ');
    const single = permissions.length === 1;
    // Registered now, once: the request path below never touches the inventory.
    inventory?.register({ service, permissions, any, resourceType: type, mode: routeMode ?? adapterMode ?? authorizer.mode, route });

    // The last question and answer of this guard, reused while they repeat (one resource asked
    // again and again, a cached token granted again): no query nor state object per request. The
    // state is frozen, being shared by the requests it is attached to.
    let lastQuery: AuthorizeQuery | undefined;
    let lastState: IamState | undefined;

    function queryOf(resolved: unknown, mode: GuardMode): AuthorizeQuery {
      const last = lastQuery;
      if (last !== undefined && last.mode === mode && (byNode ? (last.resource as { node: unknown }).node : (last.resource as { value: unknown }).value) === resolved) return last;
      return (lastQuery = Object.freeze({ service, permission: asked, resource: Object.freeze(byNode ? { node: resolved as string } : { type, value: resolved as string }), mode }));
    }

    /** The caller granted last without a shared state: the state is frozen and kept from its second grant on. */
    let lastGranted: Identity | undefined;
    /** {@link lastState} as a settled promise. */
    let lastAnswer: Promise<IamState> | undefined;

    function grantedState(identity: Identity, decision: Decision): Promise<IamState> {
      const last = lastState;
      if (last?.decision === decision && last.claims === identity.claims && last.token === identity.token) return lastAnswer as Promise<IamState>;
      // A caller seen once (distinct tokens) gets a state of its own, nothing frozen nor kept.
      if (lastGranted !== identity) {
        lastGranted = identity;
        return fresh({ token: identity.token, claims: identity.claims, decision });
      }
      lastState = Object.freeze({ token: identity.token, claims: identity.claims, decision });
      return (lastAnswer = settled(lastState));
    }

    // Synchronous while every answer is at hand — a cached token and a remembered grant are settled
    // promises (see `settledValue`), the resolver returns a value — and then the guard's answer is a
    // settled promise too, which an adapter reads without awaiting. Anything else continues in the
    // async functions below, each kept small: an async function's locals are copied to the heap.
    return (authorization, req) => {
      let authenticating: Promise<Identity>;
      try {
        authenticating = authorizer.authenticate(authorization);
      } catch (error) {
        return failed(error);
      }
      const identity = settledValue(authenticating);
      if (identity === undefined) return afterAuthentication(authenticating, req);
      // A resolver that throws is the application's bug: its error goes on untouched (a 500).
      // A value is used as it is; only a promise (or thenable) costs a tick.
      let returned: unknown;
      try {
        returned = resolve(req);
      } catch (error) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the resolver's own error, untouched
        return Promise.reject(error);
      }
      return isThenable(returned) ? afterResolver(identity, returned) : decideResolved(identity, returned);
    };

    async function afterAuthentication(authenticating: Promise<Identity>, req: Req): Promise<IamState> {
      let identity: Identity;
      try {
        identity = await authenticating;
      } catch (error) {
        return rejected(error);
      }
      const returned: unknown = resolve(req);
      return decideResolved(identity, isThenable(returned) ? await returned : returned);
    }

    async function afterResolver(identity: Identity, returned: PromiseLike<unknown>): Promise<IamState> {
      return decideResolved(identity, await returned);
    }

    function decideResolved(identity: Identity, resolved: unknown): Promise<IamState> {
      const mode = routeMode ?? adapterMode ?? authorizer.mode;
      // Several resources or permissions: a batch, with per-resource bookkeeping.
      if (!single || Array.isArray(resolved)) return decideEach(identity, resolved, mode);
      // The usual route: one resource, one permission.
      let deciding: Promise<Decision>;
      try {
        deciding = authorizer.authorize(identity, queryOf(resolved, mode));
      } catch (error) {
        return failed(error);
      }
      const decision = settledValue(deciding);
      return decision === undefined ? afterDecision(identity, deciding, mode) : answer(identity, decision, mode);
    }

    async function afterDecision(identity: Identity, deciding: Promise<Decision>, mode: GuardMode): Promise<IamState> {
      let decision: Decision;
      try {
        decision = await deciding;
      } catch (error) {
        return rejected(error);
      }
      return answer(identity, decision, mode);
    }

    function answer(identity: Identity, decision: Decision, mode: GuardMode): Promise<IamState> {
      if (decision.granted) return grantedState(identity, decision);
      if (mode !== 'report') return failed(new PermissionDeniedError(decision, service, asked));
      return Promise.resolve({ token: identity.token, claims: identity.claims, decision, shadow: true });
    }

    async function decideEach(identity: Identity, resolved: unknown, mode: GuardMode): Promise<IamState> {
      // An empty list names no resource: it is checked as `undefined`, which denies.
      const values: readonly unknown[] = Array.isArray(resolved) && resolved.length > 0 ? resolved : [Array.isArray(resolved) ? undefined : resolved];
      const queries = values.flatMap((value) => permissions.map((permission) => ({
        service, permission, resource: byNode ? { node: value as string } : { type, value: value as string }, mode,
      })));
      let all: Decision[];
      try {
        all = queries.length === 1 ? [await authorizer.authorize(identity, queries[0] as AuthorizeQuery)] : await authorizer.authorizeMany(identity, queries);
      } catch (error) {
        return rejected(error);
      }
      // Per resource, the first granting decision (or the last denial): "any of these permissions".
      const decisions: Decision[] = [];
      for (let v = 0; v < values.length; v++) {
        const forValue = all.slice(v * permissions.length, (v + 1) * permissions.length);
        decisions.push(forValue.find((d) => d.granted) ?? (forValue.at(-1) as Decision));
      }
      const denial = decisions.find((d) => !d.granted);
      if (denial && mode !== 'report') return rejected(new PermissionDeniedError(denial, service, asked));
      const last = decisions[decisions.length - 1] as Decision; // one per resource, and at least one resource
      const decision = denial ?? last;
      const state: IamState = { token: identity.token, claims: identity.claims, decision };
      const withAll = decisions.length > 1 ? { ...state, decisions } : state;
      return denial ? { ...withAll, shadow: true } : withAll;
    }
  }

  return {
    authenticate,
    requirePermission: (...args: unknown[]) => permission(parsePermissionArgs('requirePermission', false, args)),
    requireAnyPermission: (...args: unknown[]) => permission(parsePermissionArgs('requireAnyPermission', true, args)),
    permission,
    errorResponse: (error) => answerOf(withAnswerOptions(error, responseOptions)),
    passErrors,
    refusal,
    answerWrongFramework,
    at(where, make) {
      const outer = route;
      route = where;
      try {
        return make();
      } finally {
        route = outer;
      }
    },
  };
}

/** What {@link Guards.refusal} decided: pass `error` on, send `answer`, or nothing more (`onError` answered; `returned` is what it returned). */
export type Refusal =
  | {
    /** Hand `error` to the framework's own error handling (not a library error, or `passErrors`). */
    readonly action: 'pass';
    /** The error to pass on, unchanged. */
    readonly error: unknown;
  }
  | {
    /** Send `answer`: no `onError`, or one that sent nothing. */
    readonly action: 'answer';
    /** Status, headers and problem body to send. */
    readonly answer: ErrorResponse;
  }
  | {
    /** Nothing more to do: `onError` answered. */
    readonly action: 'done';
    /** What `onError` returned (a Hono or Fetch `Response`, for instance). */
    readonly returned: unknown;
  };

/** What an adapter returns: the guard makers, each guard wrapped into the framework's handler type `H`. */
export interface GuardFactory<Req, H> {
  /** A handler that verifies the bearer token and attaches `{ token, claims }`; with `optional`, a request without `Authorization` passes anonymously. */
  authenticate(options?: AuthenticateOptions): H;
  /** A handler that verifies the token and requires `permission` of `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): H;
  /** The same on node ids: `requirePermission(service, permission, { node: req => … })`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }, options?: RouteOptions): H;
  /** A handler that requires any one of `permissions` of `service` on `TYPE=resolve(req)`; the same 403 as `requirePermission`. */
  requireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): H;
  /** The same on node ids. */
  requireAnyPermission(service: string, permissions: readonly string[], node: { node: ResourceResolver<Req> }, options?: RouteOptions): H;
}

/** Wraps every guard `guards` makes with `wrap` (the adapter's middleware or hook maker). */
export function wrapGuards<Req, H>(guards: Guards<Req>, wrap: (guard: Guard<Req>) => H): GuardFactory<Req, H> {
  type Make = (...args: unknown[]) => Guard<Req>;
  const requirePermission = guards.requirePermission.bind(guards) as Make;
  const requireAnyPermission = guards.requireAnyPermission.bind(guards) as Make;
  return {
    authenticate: (options?: AuthenticateOptions) => wrap(guards.authenticate(options)),
    requirePermission: (...args: unknown[]) => wrap(requirePermission(...args)),
    requireAnyPermission: (...args: unknown[]) => wrap(requireAnyPermission(...args)),
  };
}


/**
 * An Authorizer, not something else: createAuthorizer's own options (`{ baseUrl }`) are the usual
 * mistake, so the message says what to pass instead (naming the keys it got, never their values).
 */
function checkAuthorizer(where: string, authorizer: unknown): asserts authorizer is Authorizer {
  if (typeof (authorizer as Partial<Authorizer> | null | undefined)?.check === 'function') return;
  const keys = typeof authorizer === 'object' && authorizer !== null ? Object.keys(authorizer) : [];
  const got = keys.length > 0 ? `, not createAuthorizer's options (got ${keys.slice(0, 5).map((k) => `"${k}"`).join(', ')})`
    : ` (got ${authorizer === null ? 'null' : typeof authorizer})`;
  throw new TypeError(`${where}: pass as the first argument an Authorizer made with createAuthorizer({ baseUrl, … })${got}`);
}

/** What `await` would wait for: an object or function with a callable `then`. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** An anonymous request's answer under `authenticate({ optional: true })`: no state. */
const NO_STATE: Promise<undefined> = Promise.resolve(undefined);
