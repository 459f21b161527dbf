/**
 * `IamGuard`: checks the route's requirement in HTTP, GraphQL and WebSocket contexts. Written
 * without decorator syntax so that the package builds without `experimentalDecorators`;
 * applications use the decorators as usual.
 */
import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { AuthorizerClosedError, IamAuthzError } from '../../src/index.js';
import type { Guard, Guards, IamState } from '../../src/adapter/index.js';
import { IAM_REQUIREMENT, listNames, protectedHandlers } from './discovery.js';
import { exceptionFor } from './exception.js';
import { locate, type IamRequestView } from './locate.js';
import type { IamRequirement } from './requirements.js';

/** Injection token of the module's internals (`IamAuthzCore`). */
export const IAM_AUTHZ_CORE = 'iam-authz:core';

/** What the module builds once: the core guards over {@link IamRequestView}. */
export interface IamAuthzCore {
  readonly guards: Guards<IamRequestView>;
  /** One core guard per requirement, shared by every `IamGuard`; the module makes (and inventories) them at init. */
  readonly cache: WeakMap<IamRequirement, Guard<IamRequestView>>;
}

/**
 * The contexts already checked: Nest hands one `ExecutionContext` to every guard of a request
 * (global, controller, handler), and the decorators add `IamGuard` next to the global one.
 */
const checked = new WeakSet<ExecutionContext>();

/**
 * Checks each request against its handler's (or controller's) requirement: `@RequirePermission`,
 * `@Authenticated()`, `@Public()`; without any, a valid token is required (fail closed). Sets
 * `iam` on the request (the socket for WebSocket) for `@Iam()`.
 */
export class IamGuard implements CanActivate, OnModuleInit {
  readonly #reflector: Reflector;
  readonly #core: IamAuthzCore | undefined;
  readonly #modules: ModulesContainer;
  #authenticate: Guard<IamRequestView> | undefined;

  /** @internal Made by Nest's injector (`APP_GUARD`, `@UseGuards(IamGuard)` or a decorator). */
  constructor(reflector: Reflector, core: IamAuthzCore | undefined, modules: ModulesContainer) {
    this.#reflector = reflector;
    this.#core = core;
    this.#modules = modules;
  }

  /**
   * Without `IamAuthzModule` nothing can check a request: refuse to start, naming what the
   * decorators (or `@UseGuards(IamGuard)`) meant to protect.
   * @internal
   */
  onModuleInit(): void {
    if (this.#core !== undefined) return;
    const names = protectedHandlers(this.#modules).map((h) => h.name);
    throw new Error(`IamGuard: IamAuthzModule is not imported, so nothing checks ${names.length > 0 ? listNames(names) : 'the handlers guarded by IamGuard'}; `
      + 'import IamAuthzModule.forRoot(options) or IamAuthzModule.forRootAsync(options) in the application module');
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (checked.has(context)) return true;
    const requirement = this.#reflector.getAllAndOverride<IamRequirement | undefined>(IAM_REQUIREMENT, [context.getHandler(), context.getClass()]);
    if (requirement?.kind === 'public') {
      // A socket outlives its messages: a public message must not see an earlier message's identity.
      if (context.getType() === 'ws') delete context.switchToWs().getClient<{ iam?: unknown }>().iam;
      checked.add(context);
      return true;
    }
    const { holder, authorization, view } = locate(context);
    let state: IamState | undefined;
    try {
      // Unreachable after a normal start (onModuleInit refuses); deny rather than serve.
      if (this.#core === undefined) throw new AuthorizerClosedError();
      state = await this.#guardFor(this.#core, requirement)(authorization, view);
    } catch (error) {
      if (!(error instanceof IamAuthzError)) throw error;
      // The error knows its answer; the module's guards attach its realm, retryAfterSec and exposeDecision.
      const answer = this.#core?.guards.errorResponse(error) ?? { status: error.status, headers: error.headers, body: error.problemDetails };
      throw await exceptionFor(context.getType<string>(), error, answer);
    }
    if (holder && state) holder.iam = state;
    else if (holder) delete holder.iam; // an anonymous pass clears an earlier message's identity on the socket
    checked.add(context);
    return true;
  }

  #guardFor(core: IamAuthzCore, requirement: IamRequirement | undefined): Guard<IamRequestView> {
    if (requirement === undefined || requirement.kind === 'public' || (requirement.kind === 'authenticated' && requirement.optional !== true)) return this.#authenticate ??= core.guards.authenticate();
    let guard = core.cache.get(requirement);
    if (guard === undefined) {
      guard = requirement.kind === 'authenticated' ? core.guards.authenticate({ optional: true }) : core.guards.permission(requirement);
      core.cache.set(requirement, guard);
    }
    return guard;
  }
}
Injectable()(IamGuard);
Inject(Reflector)(IamGuard, undefined, 0);
Inject(IAM_AUTHZ_CORE)(IamGuard, undefined, 1);
// Without IamAuthzModule the guard still starts, to name what is unprotected (onModuleInit).
Optional()(IamGuard, undefined, 1);
Inject(ModulesContainer)(IamGuard, undefined, 2);
