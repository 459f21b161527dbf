/**
 * Framework-neutral route guards. An adapter hands over the `Authorization` header value and its
 * request object; the guard resolves with the state to attach to the request, or rejects with an
 * `IamAuthzError` (401/403/503, with `headers` ready to send) — or with whatever the resource
 * resolver threw, which the framework turns into a 500. `createGuards` composes: the options are
 * checked in guard-options.ts, the permission guard is permission-guard.ts, the shapes guard-types.ts.
 */
import type { Authorizer } from '../authorizer.js';
import { IamAuthzError, toErrorResponse, withAnswerOptions } from '../errors.js';
import { inventoryOf, type InventoryRoute } from '../inventory.js';
import { settled, settledValue } from '../lib/settled.js';
import type { IamState, Identity } from '../types.js';
import { checkGuardOptions, type GuardOptions } from './guard-options.js';
import type { Guard, GuardFactory, Guards, InternalGuards, Refusal } from './guard-types.js';
import { parseAuthenticateOptions, parsePermissionArgs, type AuthenticateOptions, type PermissionArgs } from './permission-args.js';
import { permissionGuard } from './permission-guard.js';
import { authenticateMark, guardMarkOf, markGuard, PUBLIC } from './audit/guard-mark.js';
import { answerWrongFramework } from './wrong-framework.js';

/**
 * Builds the guards for an adapter over `authorizer`; options are validated here (`TypeError`
 * naming the option and `adapter`, the name your users call, e.g. `myFrameworkAuthz`).
 * `adapterOptions` lists your adapter's own option names (e.g. `onError`), which are accepted but
 * not read here; any other unknown name is refused.
 */
export function createGuards<Req>(authorizer: Authorizer, options: GuardOptions = {}, adapter = 'createGuards', adapterOptions: readonly string[] = []): Guards<Req> {
  return createInternalGuards(authorizer, options, adapter, adapterOptions);
}

/** {@link createGuards}, with what only the library's own adapters use (`permission`, `at`, `answerWrongFramework`). */
export function createInternalGuards<Req>(authorizer: Authorizer, options: GuardOptions = {}, adapter = 'createGuards', adapterOptions: readonly string[] = []): InternalGuards<Req> {
  const { responseOptions, mode, passErrors } = checkGuardOptions(adapter, authorizer, options, adapterOptions);

  /**
   * Where a guard rejects: the error leaves carrying its answer under this adapter's options, for
   * any renderer (`headers`, `problemDetails`, `getResponse()`, the framework's error handler).
   */
  function rejected(error: unknown): never {
    throw error instanceof IamAuthzError ? withAnswerOptions(error, responseOptions) : error;
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
    return { action: 'answer', answer: toErrorResponse(error, responseOptions) };
  }
  const inventory = inventoryOf(authorizer);
  /** The route of the guards being made inside `at()`. */
  let route: InventoryRoute | undefined;

  function authenticate(guardOptions?: AuthenticateOptions): Guard<Req> {
    const { optional } = parseAuthenticateOptions('authenticate', guardOptions);
    // Synchronous when the identity is at hand (a settled promise, see `settledValue`): the answer
    // is then a settled promise too, which an adapter reads without awaiting.
    return markGuard<Guard<Req>>((authorization) => {
      // Only a request with no Authorization header at all is anonymous; anything present is checked.
      if (optional && authorization === undefined) return NO_STATE;
      let authenticating: Promise<Identity>;
      try {
        authenticating = authorizer.authenticate(authorization);
      } catch (error) {
        return failed(error);
      }
      const identity = settledValue(authenticating);
      return identity === undefined ? authenticatedLater(authenticating) : settled({ token: identity.token, claims: identity.claims });
    }, authenticateMark(optional));
  }

  async function authenticatedLater(authenticating: Promise<Identity>): Promise<IamState> {
    try {
      const { token, claims } = await authenticating;
      return { token, claims };
    } catch (error) {
      return rejected(error);
    }
  }

  function permission(args: PermissionArgs<Req>): Guard<Req> {
    return permissionGuard({ authorizer, inventory, mode, route, rejected, failed }, args);
  }

  return {
    authenticate,
    requirePermission: (...args: unknown[]) => permission(parsePermissionArgs('requirePermission', false, args)),
    requireAnyPermission: (...args: unknown[]) => permission(parsePermissionArgs('requireAnyPermission', true, args)),
    permission,
    publicRoute: () => markGuard<Guard<Req>>(() => NO_STATE, PUBLIC),
    errorResponse: (error) => toErrorResponse(error, responseOptions),
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

/**
 * Wraps every guard `guards` makes with `wrap` (the adapter's middleware or hook maker). Each
 * handler it returns is marked with what its guard enforces, for the route audit.
 */
export function wrapGuards<Req, H>(guards: Guards<Req>, wrap: (guard: Guard<Req>) => H): GuardFactory<Req, H> {
  type Make = (...args: unknown[]) => Guard<Req>;
  const requirePermission = guards.requirePermission.bind(guards) as Make;
  const requireAnyPermission = guards.requireAnyPermission.bind(guards) as Make;
  const wrapped = (guard: Guard<Req>): H => markGuard(wrap(guard), guardMarkOf(guard));
  return {
    authenticate: (options?: AuthenticateOptions) => wrapped(guards.authenticate(options)),
    requirePermission: (...args: unknown[]) => wrapped(requirePermission(...args)),
    requireAnyPermission: (...args: unknown[]) => wrapped(requireAnyPermission(...args)),
    publicRoute: () => wrapped(guards.publicRoute()),
  };
}

/** An anonymous request's answer under `authenticate({ optional: true })`: no state. */
const NO_STATE: Promise<undefined> = Promise.resolve(undefined);
