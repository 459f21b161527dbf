/**
 * `IamGuard`: checks the route's requirement in HTTP, GraphQL and WebSocket contexts. Written
 * without decorator syntax so that the package builds without `experimentalDecorators`;
 * applications use the decorators as usual.
 */
import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { AuthorizerClosedError, IamAuthzError, type IamState } from '../../src/index.js';
import { IAM_AUTHZ_CORE, type IamAuthzCore } from './core.js';
import { moduleMissingError } from './discovery.js';
import { exceptionFor } from './exception.js';
import { locate } from './locate.js';
import { requirementOf } from './metadata.js';
import { disconnectAfterException, watchGranted } from './ws-guard.js';

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
  readonly #core: IamAuthzCore | undefined;
  readonly #modules: ModulesContainer;

  /** @internal Made by Nest's injector (`APP_GUARD`, `@UseGuards(IamGuard)` or a decorator). */
  constructor(core: IamAuthzCore | undefined, modules: ModulesContainer) {
    this.#core = core;
    this.#modules = modules;
  }

  /**
   * Without `IamAuthzModule` nothing can check a request: refuse to start, naming what the
   * decorators (or `@UseGuards(IamGuard)`) meant to protect.
   * @internal
   */
  onModuleInit(): void {
    if (this.#core === undefined) throw moduleMissingError(this.#modules);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (checked.has(context)) return true;
    const requirement = requirementOf(context.getClass(), context.getHandler());
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
      state = await this.#core.requirements.guardFor(requirement)(authorization, view);
      // A socket outlives its message: what the message was granted stays under watch.
      if (view.type === 'ws') await watchGranted(this.#core, holder, requirement, state);
    } catch (error) {
      if (!(error instanceof IamAuthzError)) throw error;
      // The error knows its answer; the module's guards attach its realm, retryAfterSec and exposeDecision.
      const answer = this.#core?.guards.errorResponse(error) ?? { status: error.status, headers: error.headers, body: error.problemDetails };
      if (view.type === 'ws' && error.status === 401) disconnectAfterException(holder); // its token stays refused
      throw await exceptionFor(context.getType<string>(), error, answer);
    }
    if (holder && state) holder.iam = state;
    else if (holder) delete holder.iam; // an anonymous pass clears an earlier message's identity on the socket
    checked.add(context);
    return true;
  }
}
Injectable()(IamGuard);
Inject(IAM_AUTHZ_CORE)(IamGuard, undefined, 0);
// Without IamAuthzModule the guard still starts, to name what is unprotected (onModuleInit).
Optional()(IamGuard, undefined, 0);
Inject(ModulesContainer)(IamGuard, undefined, 1);
