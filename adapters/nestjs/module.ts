/**
 * `IamAuthzModule`: one `Authorizer` per application (created from options, or yours), injectable as
 * `IAM_AUTHORIZER`; `IamGuard` (global by default) and its exception filter; the authorizer it
 * created is closed on application shutdown.
 */
import { Inject, Module, type DynamicModule, type FactoryProvider, type ModuleMetadata, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, ModulesContainer } from '@nestjs/core';
import { createAuthorizer, type Authorizer, type AuthorizerOptions } from '../../src/index.js';
import { createGuards, type GuardOptions } from '../../src/adapter/index.js';
import { listNames, protectedHandlers, requirementOf, unguardedFieldResolvers } from './discovery.js';
import { IamExceptionFilter } from './exception.js';
import { IAM_AUTHZ_CORE, IamGuard, type IamAuthzCore } from './guard.js';
import type { IamRequestView } from './locate.js';

/** Injection token of the module's `Authorizer`. */
export const IAM_AUTHORIZER = 'iam-authz:authorizer';

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

interface Built extends IamAuthzCore {
  readonly authorizer: Authorizer;
  /** Created here, so closed here. */
  readonly owned: boolean;
}

/** Only `undefined` means "default": a `null` is a mistake worth naming. */
function refuseNull(where: string, options: object, keys: readonly string[]): void {
  for (const key of keys) if ((options as Record<string, unknown>)[key] === null) throw new TypeError(`${where}: "${key}" must not be null (leave it out, or pass undefined, for the default)`);
}

function build(options: IamAuthzModuleOptions): Built {
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

/** `IamAuthzModule.forRoot(options)` / `forRootAsync({ imports, useFactory, inject })`; global. */
export class IamAuthzModule implements OnModuleInit, OnApplicationShutdown {
  readonly #built: Built;
  readonly #modules: ModulesContainer;
  /** @internal Made by Nest from the module's providers. */
  constructor(built: Built, modules: ModulesContainer) {
    this.#built = built;
    this.#modules = modules;
  }

  /**
   * Refuses to start when a protected GraphQL field resolver would run without guards (Nest runs
   * none on field resolvers unless `fieldResolverEnhancers` includes `'guards'`).
   * @internal
   */
  onModuleInit(): void {
    this.#inventory();
    const unguarded = unguardedFieldResolvers(this.#modules);
    if (unguarded.length === 0) return;
    throw new Error(`IamAuthzModule: the GraphQL field resolvers ${listNames(unguarded)} carry a requirement, but Nest runs no guards on field resolvers; `
      + `set GraphQLModule.forRoot({ ..., fieldResolverEnhancers: ['guards'] })`);
  }

  /**
   * Decorators run before the module knows its authorizer: the decorated handlers are found here and
   * their guards made now, each inventoried with its controller and handler, before any request.
   */
  #inventory(): void {
    const { guards, cache } = this.#built;
    for (const { type, method, handler } of protectedHandlers(this.#modules)) {
      const requirement = requirementOf(type, handler);
      if (requirement === undefined || requirement.kind === 'public' || requirement.kind === 'authenticated') continue;
      const guard = guards.at({ controller: type.name, handler: method }, () => guards.permission(requirement));
      if (!cache.has(requirement)) cache.set(requirement, guard);
    }
  }

  /** Closes the authorizer when the module created it (one given as `authorizer` stays yours). */
  async onApplicationShutdown(): Promise<void> {
    if (this.#built.owned) await this.#built.authorizer.close();
  }

  /** Options are validated here (`TypeError` naming the option); `globalGuard: false` leaves `@UseGuards(IamGuard)` to you. */
  static forRoot(options: IamAuthzModuleOptions & { globalGuard?: boolean }): DynamicModule {
    if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule: options must be an object');
    refuseNull('IamAuthzModule', options, ['globalGuard']);
    const { globalGuard = true, ...rest } = options;
    const built = build(rest);
    return IamAuthzModule.#module([{ provide: IAM_AUTHZ_CORE, useValue: built }], globalGuard, []);
  }

  /** Options from a factory (e.g. `ConfigService`); validated when the module is instantiated. */
  static forRootAsync(options: IamAuthzAsyncOptions): DynamicModule {
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
    const provider: Provider = { provide: IAM_AUTHZ_CORE, useFactory: async (...args: never[]) => build(await useFactory(...args)), inject };
    return IamAuthzModule.#module([provider], globalGuard, imports);
  }

  static #module(core: Provider[], globalGuard: boolean, imports: NonNullable<ModuleMetadata['imports']>): DynamicModule {
    if (typeof globalGuard !== 'boolean') throw new TypeError('IamAuthzModule: "globalGuard" must be a boolean');
    const providers: Provider[] = [
      ...core,
      { provide: IAM_AUTHORIZER, useFactory: (built: Built) => built.authorizer, inject: [IAM_AUTHZ_CORE] },
      IamGuard,
      { provide: APP_FILTER, useClass: IamExceptionFilter },
    ];
    if (globalGuard) providers.push({ provide: APP_GUARD, useExisting: IamGuard });
    // @UseGuards(IamGuard) instantiates the guard in the controller's module: it needs the core there.
    return { module: IamAuthzModule, global: true, imports, providers, exports: [IAM_AUTHORIZER, IAM_AUTHZ_CORE, IamGuard] };
  }
}
Module({})(IamAuthzModule);
Inject(IAM_AUTHZ_CORE)(IamAuthzModule, undefined, 0);
Inject(ModulesContainer)(IamAuthzModule, undefined, 1);
