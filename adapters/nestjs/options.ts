/**
 * `IamAuthzModule`'s options: their types, and the checks of what `forRoot` and `forRootAsync`
 * take around them (the module's options proper are checked where they are built from, `core.ts`).
 */
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { Authorizer, AuthorizerOptions } from '../../src/index.js';
import type { GuardOptions } from '../../src/adapter/index.js';
import { refuseNulls } from '../../src/adapter/internal.js';

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

/** Options of `IamAuthzModule.forRootAsync`: a factory of the module's options, with what it needs. */
export interface IamAuthzAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options, e.g. from `ConfigService`. */
  useFactory: (...args: never[]) => IamAuthzModuleOptions | Promise<IamAuthzModuleOptions>;
  /** What `useFactory` receives. Default `[]`. */
  inject?: FactoryProvider['inject'];
  /** Register `IamGuard` for every route (`APP_GUARD`). Default `true`. */
  globalGuard?: boolean;
}

const ASYNC_OPTIONS = ['imports', 'useFactory', 'inject', 'globalGuard'];

/** `forRoot`'s options, split: `globalGuard` (checked, with its default) and the module's options (checked when built). */
export function checkRootOptions(options: IamAuthzModuleOptions & { globalGuard?: boolean }): { globalGuard: boolean; rest: IamAuthzModuleOptions } {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule: options must be an object');
  refuseNulls('IamAuthzModule', options, ['globalGuard']);
  const { globalGuard = true, ...rest } = options;
  if (typeof globalGuard !== 'boolean') throw new TypeError('IamAuthzModule: "globalGuard" must be a boolean');
  return { globalGuard, rest };
}

/** `forRootAsync`'s options, checked (`TypeError` naming the option), with their defaults. */
export function checkAsyncOptions(options: IamAuthzAsyncOptions): { [K in keyof IamAuthzAsyncOptions]-?: NonNullable<IamAuthzAsyncOptions[K]> } {
    if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule.forRootAsync: options must be an object');
    for (const key of Object.keys(options)) {
      if (!ASYNC_OPTIONS.includes(key)) throw new TypeError(`IamAuthzModule.forRootAsync: unknown option "${key}"`);
    }
    refuseNulls('IamAuthzModule.forRootAsync', options, ASYNC_OPTIONS);
    const { globalGuard = true, useFactory, inject = [], imports = [] } = options;
    if (typeof useFactory !== 'function') throw new TypeError('IamAuthzModule.forRootAsync: "useFactory" must be a function');
    if (!Array.isArray(inject)) throw new TypeError('IamAuthzModule.forRootAsync: "inject" must be an array');
    if (!Array.isArray(imports)) throw new TypeError('IamAuthzModule.forRootAsync: "imports" must be an array');
    if (typeof globalGuard !== 'boolean') throw new TypeError('IamAuthzModule.forRootAsync: "globalGuard" must be a boolean');
  return { globalGuard, useFactory, inject, imports };
}
