/**
 * Framework-neutral route guards. An adapter hands over the `Authorization` header value and its
 * request object; the guard resolves with the state to attach to the request, or rejects with an
 * `IamAuthzError` (401/403/503, with `headers` ready to send) — or with whatever the resource
 * resolver threw, which the framework turns into a 500.
 */
import type { Authorizer } from '../authorizer.js';
import type { Decision } from '../types.js';
import { IamAuthzError, PermissionDeniedError } from '../errors.js';
import type { IamClaims } from '../types.js';
import { checkRealm, toErrorResponse, type ErrorResponse, type ErrorResponseOptions } from './error-response.js';

/** What a guard attaches to the request (`req.iam`, `ctx.state.iam`, `request.iam`). */
export interface IamState {
  /** The verified bearer token. Never log it. */
  readonly token: string;
  /** The verified claims. */
  readonly claims: IamClaims;
  /** The permission decision; absent after `authenticate()` alone. With several resources: the last one. */
  readonly decision?: Decision;
  /** Every decision, when the resolver returned several resources. */
  readonly decisions?: readonly Decision[];
}

/** Returns the resource value(s) of a request: a string, several (all are required), or nothing (denies). */
export type ResourceResolver<Req> = (req: Req) => string | readonly string[] | undefined | null | Promise<string | readonly string[] | undefined | null>;

/** Options every adapter shares. */
export interface GuardOptions {
  /** `realm` of the `WWW-Authenticate` challenge. Default `"iam"`. */
  realm?: string;
  /** Include the decision (roles, reason, changeId) in 403 bodies, and the full message in 401 bodies; for development only. Default `false`. */
  exposeDecision?: boolean;
  /** `Retry-After` (s) sent with 503 answers. Default `5`. */
  retryAfterSec?: number;
  /**
   * Hand the `IamAuthzError` (with `status`, `statusCode` and `headers` set) to the framework's own
   * error handling instead of answering: Express `next(err)`, Koa `throw` (to upstream middleware
   * or `app.on('error')`), Fastify the error handler (`setErrorHandler`). Default `false`.
   */
  passErrors?: boolean;
}

const GUARD_OPTIONS = ['realm', 'exposeDecision', 'retryAfterSec', 'passErrors'];

/** A framework-neutral guard: resolves with the state to attach, or rejects with an `IamAuthzError`. */
export type Guard<Req> = (authorization: string | undefined, req: Req) => Promise<IamState>;

/** The framework-neutral guards an adapter wraps; from {@link createGuards}. */
export interface Guards<Req> {
  /** A guard that only verifies the token. */
  authenticate(): Guard<Req>;
  /** A guard that requires `permission` in `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>): Guard<Req>;
  /** A guard that requires `permission` in `service` on the node id `node(req)`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }): Guard<Req>;
  /** The HTTP answer for a guard's `IamAuthzError` (its `headers` are already set by the guard). */
  errorResponse(error: IamAuthzError): ErrorResponse;
  /** The `passErrors` option, resolved. */
  readonly passErrors: boolean;
}

/**
 * Builds the guards for an adapter; options are validated here (`TypeError` naming the option and
 * `adapter`). `adapterOptions` lists the adapter's own option names (e.g. `onError`), which are
 * accepted but not read here; any other unknown name is refused.
 */
export function createGuards<Req>(authorizer: Authorizer, options: GuardOptions = {}, adapter = 'createGuards', adapterOptions: readonly string[] = []): Guards<Req> {
  if (typeof (authorizer as Partial<Authorizer> | undefined)?.check !== 'function') throw new TypeError(`${adapter}: an Authorizer from createAuthorizer() is required`);
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError(`${adapter}: options must be an object`);
  for (const key of Object.keys(options)) {
    if (!GUARD_OPTIONS.includes(key) && !adapterOptions.includes(key)) throw new TypeError(`${adapter}: unknown option "${key}"`);
  }
  if (options.passErrors !== undefined && typeof options.passErrors !== 'boolean') throw new TypeError(`${adapter}: "passErrors" must be a boolean`);
  if (options.exposeDecision !== undefined && typeof options.exposeDecision !== 'boolean') throw new TypeError(`${adapter}: "exposeDecision" must be a boolean`);
  const responseOptions: ErrorResponseOptions = {
    realm: checkRealm(options.realm ?? 'iam'),
    exposeDecision: options.exposeDecision === true,
    retryAfterSec: options.retryAfterSec ?? 5,
  };
  if (!Number.isSafeInteger(responseOptions.retryAfterSec) || responseOptions.retryAfterSec < 0) {
    throw new TypeError(`${adapter}: "retryAfterSec" must be a non-negative integer`);
  }

  /** Where a guard rejects: the error leaves with the headers of its answer, for any renderer. */
  function rejected(error: unknown): never {
    if (error instanceof IamAuthzError) {
      const { headers } = toErrorResponse(error, responseOptions);
      error.headers = headers;
    }
    throw error;
  }

  function authenticate(): Guard<Req> {
    return async (authorization) => {
      try {
        const { token, claims } = await authorizer.authenticate(authorization);
        return { token, claims };
      } catch (error) {
        return rejected(error);
      }
    };
  }

  function requirePermission(service: string, permission: string, target: string | { node: ResourceResolver<Req> }, resolver?: ResourceResolver<Req>): Guard<Req> {
    if (typeof service !== 'string' || service.length === 0) throw new TypeError('requirePermission: "service" must be a non-empty string');
    if (typeof permission !== 'string' || permission.length === 0) throw new TypeError('requirePermission: "permission" must be a non-empty string');
    const byNode = typeof target === 'object';
    const resolve = byNode ? target.node : resolver;
    if (!byNode && (typeof target !== 'string' || target.length === 0 || target.includes('='))) {
      throw new TypeError('requirePermission: the resource type must be a non-empty string without "="');
    }
    if (typeof resolve !== 'function') throw new TypeError('requirePermission: the resource resolver must be a function');
    const type = target as string;

    return async (authorization, req) => {
      let identity;
      try {
        identity = await authorizer.authenticate(authorization);
      } catch (error) {
        return rejected(error);
      }
      // A resolver that throws is the application's bug: its error goes on untouched (a 500).
      const resolved: unknown = await resolve(req);
      // An empty list names no resource: it is checked as `undefined`, which denies.
      const values: readonly unknown[] = Array.isArray(resolved) && resolved.length > 0 ? resolved : [Array.isArray(resolved) ? undefined : resolved];
      let decision: Decision | undefined;
      const decisions: Decision[] | undefined = values.length > 1 ? [] : undefined;
      for (const value of values) {
        const resource = byNode ? { node: value as string } : { type, value: value as string };
        try {
          decision = await authorizer.authorize(identity, { service, permission, resource });
        } catch (error) {
          return rejected(error);
        }
        if (!decision.granted) return rejected(new PermissionDeniedError(decision, service, permission));
        decisions?.push(decision);
      }
      const state = { token: identity.token, claims: identity.claims, decision: decision as Decision };
      return decisions ? { ...state, decisions } : state;
    };
  }

  return {
    authenticate,
    requirePermission: requirePermission,
    errorResponse: (error) => toErrorResponse(error, responseOptions),
    passErrors: options.passErrors === true,
  };
}

/** What an adapter returns: the two guard makers, each guard wrapped into the framework's handler type `H`. */
export interface GuardFactory<Req, H> {
  /** A handler that verifies the bearer token and attaches `{ token, claims }`. */
  authenticate(): H;
  /** A handler that verifies the token and requires `permission` of `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>): H;
  /** The same on node ids: `requirePermission(service, permission, { node: req => … })`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }): H;
}

/** Wraps every guard `guards` makes with `wrap` (the adapter's middleware or hook maker). */
export function wrapGuards<Req, H>(guards: Guards<Req>, wrap: (guard: Guard<Req>) => H): GuardFactory<Req, H> {
  const requirePermission = (service: string, permission: string, target: string | { node: ResourceResolver<Req> }, resolve?: ResourceResolver<Req>): H =>
    wrap(typeof target === 'string'
      ? guards.requirePermission(service, permission, target, resolve as ResourceResolver<Req>)
      : guards.requirePermission(service, permission, target));
  return { authenticate: () => wrap(guards.authenticate()), requirePermission: requirePermission };
}
