/**
 * `IamAuthzModule`: one `Authorizer` per application (created from options, or yours), injectable as
 * `IAM_AUTHORIZER`; `IamGuard` (global by default) and its exception filter; the authorizer it
 * created is closed on application shutdown.
 */
import { Inject, Module, type DynamicModule, type ModuleMetadata, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, ModulesContainer } from '@nestjs/core';
import { listNames, protectedHandlers, requirementOf, unguardedFieldResolvers } from './discovery.js';
import { IamExceptionFilter } from './exception.js';
import { IAM_AUTHZ_CORE, IamGuard } from './guard.js';
import { build, checkAsyncOptions, refuseNull, type Built, type IamAuthzAsyncOptions, type IamAuthzModuleOptions } from './options.js';

export type { IamAuthzAsyncOptions, IamAuthzModuleOptions, NestAuthzOptions } from './options.js';

/** Injection token of the module's `Authorizer`. */
export const IAM_AUTHORIZER = 'iam-authz:authorizer';

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
    const { globalGuard, useFactory, inject, imports } = checkAsyncOptions(options);
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
