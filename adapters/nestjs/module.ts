/**
 * `IamAuthzModule`: one `Authorizer` per application (created from options, or yours), injectable as
 * `IAM_AUTHORIZER`; `IamGuard` (global by default) and its exception filter; the authorizer it
 * created is closed on application shutdown.
 */
import { Inject, Module, type DynamicModule, type ModuleMetadata, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, ModulesContainer } from '@nestjs/core';
import { build, IAM_AUTHORIZER, IAM_AUTHZ_CORE, type IamAuthzCore } from './core.js';
import { protectedHandlers } from './discovery.js';
import { IamExceptionFilter } from './exception.js';
import { refuseUnguardedFieldResolvers } from './graphql.js';
import { IamGuard } from './guard.js';
import { checkAsyncOptions, checkRootOptions, type IamAuthzAsyncOptions, type IamAuthzModuleOptions } from './options.js';

export type { IamAuthzAsyncOptions, IamAuthzModuleOptions, NestAuthzOptions } from './options.js';

export { IAM_AUTHORIZER };

/** `IamAuthzModule.forRoot(options)` / `forRootAsync({ imports, useFactory, inject })`; global. */
export class IamAuthzModule implements OnModuleInit, OnApplicationShutdown {
  readonly #core: IamAuthzCore;
  readonly #modules: ModulesContainer;
  /** @internal Made by Nest from the module's providers. */
  constructor(core: IamAuthzCore, modules: ModulesContainer) {
    this.#core = core;
    this.#modules = modules;
  }

  /**
   * Decorators run before the module knows its authorizer: the decorated handlers are found here and
   * their guards made now, each inventoried with its controller and handler, before any request.
   * Then refuses to start when a protected GraphQL field resolver would run without guards (Nest
   * runs none on field resolvers unless `fieldResolverEnhancers` includes `'guards'`).
   * @internal
   */
  onModuleInit(): void {
    for (const { type, method, requirement } of protectedHandlers(this.#modules)) {
      this.#core.requirements.prepare({ controller: type.name, handler: method }, requirement);
    }
    refuseUnguardedFieldResolvers(this.#modules);
  }

  /** Closes the authorizer when the module created it (one given as `authorizer` stays yours). */
  async onApplicationShutdown(): Promise<void> {
    if (this.#core.owned) await this.#core.authorizer.close();
  }

  /** Options are validated here (`TypeError` naming the option); `globalGuard: false` leaves `@UseGuards(IamGuard)` to you. */
  static forRoot(options: IamAuthzModuleOptions & { globalGuard?: boolean }): DynamicModule {
    const { globalGuard, rest } = checkRootOptions(options);
    return IamAuthzModule.#module([{ provide: IAM_AUTHZ_CORE, useValue: build(rest) }], globalGuard, []);
  }

  /** Options from a factory (e.g. `ConfigService`); validated when the module is instantiated. */
  static forRootAsync(options: IamAuthzAsyncOptions): DynamicModule {
    const { globalGuard, useFactory, inject, imports } = checkAsyncOptions(options);
    const provider: Provider = { provide: IAM_AUTHZ_CORE, useFactory: async (...args: never[]) => build(await useFactory(...args)), inject };
    return IamAuthzModule.#module([provider], globalGuard, imports);
  }

  static #module(core: Provider[], globalGuard: boolean, imports: NonNullable<ModuleMetadata['imports']>): DynamicModule {
    const providers: Provider[] = [
      ...core,
      { provide: IAM_AUTHORIZER, useFactory: (built: IamAuthzCore) => built.authorizer, inject: [IAM_AUTHZ_CORE] },
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
