/**
 * The options every adapter shares (`GuardOptions`), checked once when an adapter is made: each
 * mistake is a `TypeError` naming the option and the adapter. Also the authorizer argument, whose
 * usual mistake (createAuthorizer's options in its place) gets a message saying what to pass.
 */
import type { Authorizer } from '../authorizer.js';
import type { ErrorResponseOptions } from '../errors.js';
import { refuseNulls } from '../lib/option-checks.js';
import type { GuardMode } from '../types.js';
import { checkMode, checkOptionsObject } from './permission-args.js';

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

/** {@link GuardOptions}, checked, with their defaults. */
export interface CheckedGuardOptions {
  /** What shapes the answers of this adapter's refusals. */
  readonly responseOptions: ErrorResponseOptions;
  /** The adapter's mode, if it set one. */
  readonly mode: GuardMode | undefined;
  readonly passErrors: boolean;
}

/**
 * Checks `createGuards`' arguments as `adapter` takes them: the authorizer, and the options, where
 * `adapterOptions` lists the adapter's own option names (e.g. `onError`), which are accepted but
 * not read here; any other unknown name is refused.
 */
export function checkGuardOptions(adapter: string, authorizer: unknown, options: unknown, adapterOptions: readonly string[]): CheckedGuardOptions {
  checkAuthorizer(adapter, authorizer);
  checkOptionsObject(adapter, 'options', options);
  for (const key of Object.keys(options)) {
    if (!GUARD_OPTIONS.includes(key) && !adapterOptions.includes(key)) throw new TypeError(`${adapter}: unknown option "${key}"`);
  }
  refuseNulls(adapter, options);
  const { onError, passErrors, exposeDecision, realm, retryAfterSec, mode } = options as GuardOptions & { onError?: unknown };
  if (onError !== undefined && typeof onError !== 'function') throw new TypeError(`${adapter}: "onError" must be a function`);
  if (onError !== undefined && passErrors === true) {
    throw new TypeError(`${adapter}: "onError" and "passErrors" exclude each other: answer refusals in onError, or pass them to the framework's error handler`);
  }
  if (passErrors !== undefined && typeof passErrors !== 'boolean') throw new TypeError(`${adapter}: "passErrors" must be a boolean`);
  if (exposeDecision !== undefined && typeof exposeDecision !== 'boolean') throw new TypeError(`${adapter}: "exposeDecision" must be a boolean`);
  const adapterMode = checkMode(adapter, mode);
  const responseOptions: ErrorResponseOptions = {
    realm: realm === undefined ? 'iam' : checkRealm(realm, adapter),
    exposeDecision: exposeDecision === true,
    retryAfterSec: retryAfterSec ?? 5,
  };
  if (!Number.isSafeInteger(responseOptions.retryAfterSec) || responseOptions.retryAfterSec < 0) {
    throw new TypeError(`${adapter}: "retryAfterSec" must be a non-negative integer`);
  }
  return { responseOptions, mode: adapterMode, passErrors: passErrors === true };
}

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

/** A `realm`: printable ASCII, since it is written into the `WWW-Authenticate` header. */
function checkRealm(realm: unknown, where: string): string {
  if (typeof realm !== 'string' || realm.length === 0 || /[^\x20-\x7e]/.test(realm)) {
    throw new TypeError(`${where}: "realm" must be a non-empty string of printable ASCII`);
  }
  return realm;
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
