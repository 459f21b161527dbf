/**
 * `IamAuthzModule`'s options: their types, their checks, and what the module builds from them
 * (the authorizer, unless one is given, and the kit's guards).
 */
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import { createAuthorizer, type Authorizer, type AuthorizerOptions } from '../../src/index.js';
import { createGuards, type GuardOptions } from '../../src/adapter/index.js';
import type { IamAuthzCore } from './guard.js';
import type { IamRequestView } from './locate.js';

/**
 * The adapter's own options (the response options every adapter shares). No `passErrors`: Nest
 * hands refusals to exception filters already (`IamHttpException`).
 */
export type NestAuthzOptions = Omit<GuardOptions, 'passErrors'>;

/**
 * `createAuthorizer` options plus the adapter options, or `{ authorizer }` to use one you made (it is
 * then yours to close) plus the adapter options.
 */
export type IamAuthzModuleOptions =
  | (AuthorizerOptions & NestAuthzOptions & {
    /** Not with `createAuthorizer` options. */
    authorizer?: never;
  })
  | (NestAuthzOptions & {
    /** An authorizer you made and will close yourself. */
    authorizer: Authorizer;
  });

export interface IamAuthzAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options, e.g. from `ConfigService`. */
  useFactory: (...args: never[]) => IamAuthzModuleOptions | Promise<IamAuthzModuleOptions>;
  /** What `useFactory` receives. Default `[]`. */
  inject?: FactoryProvider['inject'];
  /** Register `IamGuard` for every route (`APP_GUARD`). Default `true`. */
  globalGuard?: boolean;
}

const ASYNC_OPTIONS = ['imports', 'useFactory', 'inject', 'globalGuard'];

export interface Built extends IamAuthzCore {
  readonly authorizer: Authorizer;
  /** Created here, so closed here. */
  readonly owned: boolean;
}

/** Only `undefined` means "default": a `null` is a mistake worth naming. */
export function refuseNull(where: string, options: object, keys: readonly string[]): void {
  for (const key of keys) if ((options as Record<string, unknown>)[key] === null) throw new TypeError(`${where}: "${key}" must not be null (leave it out, or pass undefined, for the default)`);
}

export function build(options: IamAuthzModuleOptions): Built {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule: options must be an object');
  refuseNull('IamAuthzModule', options, ['realm', 'exposeDecision', 'retryAfterSec', 'mode', 'authorizer', 'globalGuard']);
  if ('passErrors' in options) throw new TypeError('IamAuthzModule: "passErrors" is not supported: refusals reach your exception filters as IamHttpException already');
  const { realm, exposeDecision, retryAfterSec, mode, authorizer: given, ...rest } = options as NestAuthzOptions & { authorizer?: Authorizer } & Record<string, unknown>;
  const guardOptions: GuardOptions = {};
  // `mode` is the module's default for its routes (a route's own { mode } wins), as an adapter's is.
  if (mode !== undefined) guardOptions.mode = mode;
  if (realm !== undefined) guardOptions.realm = realm;
  if (exposeDecision !== undefined) guardOptions.exposeDecision = exposeDecision;
  if (retryAfterSec !== undefined) guardOptions.retryAfterSec = retryAfterSec;
  const extra = Object.keys(rest)[0];
  if (given !== undefined && extra !== undefined) throw new TypeError(`IamAuthzModule: "${extra}" cannot be given with "authorizer"`);
  const authorizer = given ?? createAuthorizer(rest);
  try {
    return { authorizer, owned: given === undefined, guards: createGuards<IamRequestView>(authorizer, guardOptions), cache: new WeakMap() };
  } catch (error) {
    if (given === undefined) void authorizer.close();
    throw error;
  }
}

/** `forRootAsync`'s options, checked (`TypeError` naming the option), with their defaults. */
export function checkAsyncOptions(options: IamAuthzAsyncOptions): { [K in keyof IamAuthzAsyncOptions]-?: NonNullable<IamAuthzAsyncOptions[K]> } {
    if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule.forRootAsync: options must be an object');
    for (const key of Object.keys(options)) {
      if (!ASYNC_OPTIONS.includes(key)) throw new TypeError(`IamAuthzModule.forRootAsync: unknown option "${key}"`);
    }
    refuseNull('IamAuthzModule.forRootAsync', options, ASYNC_OPTIONS);
    const { globalGuard = true, useFactory, inject = [], imports = [] } = options;
    if (typeof useFactory !== 'function') throw new TypeError('IamAuthzModule.forRootAsync: "useFactory" must be a function');
    if (!Array.isArray(inject)) throw new TypeError('IamAuthzModule.forRootAsync: "inject" must be an array');
    if (!Array.isArray(imports)) throw new TypeError('IamAuthzModule.forRootAsync: "imports" must be an array');
    if (typeof globalGuard !== 'boolean') throw new TypeError('IamAuthzModule.forRootAsync: "globalGuard" must be a boolean');
  return { globalGuard, useFactory, inject, imports };
}
