/**
 * `IamGuard` (checks the route's requirement in HTTP, GraphQL and WebSocket contexts), the
 * exception it throws for 401/403/503, the filter that renders that exception exactly as the other
 * adapters do, and the `@Iam()` parameter decorator. Written without decorator syntax so that the
 * package builds without `experimentalDecorators`; applications use the decorators as usual.
 */
import { Catch, createParamDecorator, HttpException, Inject, Injectable, Optional, type ArgumentsHost, type CanActivate, type ExceptionFilter, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer, Reflector } from '@nestjs/core';
import { AuthorizerClosedError, IamAuthzError } from '../../src/index.js';
import type { ErrorResponse, Guard, Guards, IamState } from '../../src/adapter/index.js';
import { IAM_REQUIREMENT, listNames, protectedHandlers } from './discovery.js';
import type { IamRequestView, IamRequirement } from './requirements.js';

/** Injection token of the module's internals (`IamAuthzCore`). */
export const IAM_AUTHZ_CORE = 'iam-authz:core';

/** What the module builds once: the core guards over {@link IamRequestView}. */
export interface IamAuthzCore {
  readonly guards: Guards<IamRequestView>;
  /** One core guard per requirement, shared by every `IamGuard`; the module makes (and inventories) them at init. */
  readonly cache: WeakMap<IamRequirement, Guard<IamRequestView>>;
}

/** The core guard for a permission requirement (each one made registers it in the authorizer's inventory). */
export function permissionGuard(guards: Guards<IamRequestView>, requirement: IamRequirement & { kind: 'node' | 'permission' | 'any-node' | 'any' }): Guard<IamRequestView> {
  switch (requirement.kind) {
    case 'node': return guards.requirePermission(requirement.service, requirement.permission, { node: requirement.resolve }, requirement.options);
    case 'permission': return guards.requirePermission(requirement.service, requirement.permission, requirement.type, requirement.resolve, requirement.options);
    case 'any-node': return guards.requireAnyPermission(requirement.service, requirement.permissions, { node: requirement.resolve }, requirement.options);
    case 'any': return guards.requireAnyPermission(requirement.service, requirement.permissions, requirement.type, requirement.resolve, requirement.options);
  }
}

/**
 * The exception `IamGuard` throws for a refusal: an `HttpException` whose response is the
 * problem+json body, with the answer's `headers` and the original `error`. `IamExceptionFilter`
 * (registered by `IamAuthzModule`) renders it; your own filter may instead.
 */
export class IamHttpException extends HttpException {
  /** `WWW-Authenticate` or `Retry-After`, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The library's error (its `code` is in the body too). */
  readonly error: IamAuthzError;
  constructor(error: IamAuthzError, answer: ErrorResponse) {
    super(answer.body, answer.status, { cause: error });
    this.headers = answer.headers;
    this.error = error;
  }
}

interface Located {
  /** Where `iam` is attached: the HTTP request, or the socket for WebSocket. */
  readonly holder: Record<string, unknown> | undefined;
  readonly authorization: string | undefined;
  readonly view: IamRequestView;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

type HeaderBag = Record<string, string | string[] | undefined>;
type HttpLike = { headers?: HeaderBag; params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };

function header(headers: HeaderBag | undefined): string | undefined {
  const value = headers?.authorization;
  // Several Authorization headers are ambiguous: refuse them as missing rather than pick one.
  return typeof value === 'string' ? value : undefined;
}

/** Finds the request, its `Authorization` value and the resolver's view in any Nest context. */
export function locate(context: ExecutionContext): Located {
  const type = context.getType<string>();
  if (type === 'graphql') {
    const [, args, gqlContext] = context.getArgs<[unknown, Record<string, unknown> | undefined, { req?: HttpLike; request?: HttpLike } | undefined]>();
    // Apollo puts the HTTP request at `req`, Mercurius at `reply.request` (exposed as `request` here by convention).
    const request = gqlContext?.req ?? gqlContext?.request;
    return {
      holder: request,
      authorization: header(request?.headers),
      view: { type, params: EMPTY, query: EMPTY, body: undefined, headers: request?.headers ?? EMPTY, args: args ?? EMPTY, context },
    };
  }
  if (type === 'ws') {
    const ws = context.switchToWs();
    const client = ws.getClient<{ handshake?: { headers?: HeaderBag; auth?: { token?: unknown } }; iamAuthorization?: unknown }>();
    const headers = client.handshake?.headers;
    // socket.io: the handshake's Authorization header, or `auth: { token }` (browsers cannot set headers);
    // other WebSocket libraries: whatever the gateway stored at `client.iamAuthorization` on connection.
    const token = client.handshake?.auth?.token;
    const authorization = header(headers) ?? (typeof token === 'string' ? `Bearer ${token}` : undefined)
      ?? (typeof client.iamAuthorization === 'string' ? client.iamAuthorization : undefined);
    return {
      holder: client,
      authorization,
      view: { type, params: EMPTY, query: EMPTY, body: ws.getData(), headers: headers ?? EMPTY, args: EMPTY, context },
    };
  }
  const request = context.switchToHttp().getRequest<HttpLike>();
  return {
    holder: request,
    authorization: header(request.headers),
    view: { type, params: request.params ?? EMPTY, query: request.query ?? EMPTY, body: request.body, headers: request.headers ?? EMPTY, args: EMPTY, context },
  };
}

/**
 * Gateways answer only `WsException`s to the client (with `{ status: 'error', message }` on the
 * `exception` event); loaded on first use so that HTTP-only applications need no @nestjs/websockets.
 */
async function wsException(answer: ErrorResponse): Promise<Error> {
  const { WsException } = await import('@nestjs/websockets');
  return new WsException({ ...answer.body });
}

/**
 * A GraphQL error whose `extensions` are the problem body (`extensions.code` is the library's code,
 * `extensions.status` the HTTP status the other adapters send). A resolver's error is a field error:
 * the HTTP answer stays 200 with `errors[]`, as GraphQL over HTTP has it.
 */
async function graphqlError(answer: ErrorResponse): Promise<Error> {
  const { GraphQLError } = await import('graphql');
  return new GraphQLError(answer.body.detail, { extensions: { ...answer.body } });
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
      const type = context.getType<string>();
      if (type === 'ws') throw await wsException(answer);
      if (type === 'graphql') throw await graphqlError(answer);
      throw new IamHttpException(error, answer);
    }
    if (holder && state) holder.iam = state;
    checked.add(context);
    return true;
  }

  #guardFor(core: IamAuthzCore, requirement: IamRequirement | undefined): Guard<IamRequestView> {
    if (requirement === undefined || requirement.kind === 'public' || (requirement.kind === 'authenticated' && requirement.optional !== true)) return this.#authenticate ??= core.guards.authenticate();
    let guard = core.cache.get(requirement);
    if (guard === undefined) {
      guard = requirement.kind === 'authenticated' ? core.guards.authenticate({ optional: true }) : permissionGuard(core.guards, requirement);
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

/**
 * Renders {@link IamHttpException} over HTTP as every adapter does: status, `WWW-Authenticate` or
 * `Retry-After`, `application/problem+json` body (none for HEAD). In GraphQL and WebSocket contexts
 * it returns the exception for Nest's own handling there.
 */
export class IamExceptionFilter implements ExceptionFilter<IamHttpException> {
  readonly #host: HttpAdapterHost;
  constructor(host: HttpAdapterHost) {
    this.#host = host;
  }

  catch(exception: IamHttpException, host: ArgumentsHost): unknown {
    if (host.getType() !== 'http') return exception;
    const adapter = this.#host.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    if (adapter.isHeadersSent(response)) return adapter.end(response);
    for (const [name, value] of Object.entries(exception.headers)) adapter.setHeader(response, name, value);
    adapter.setHeader(response, 'content-type', 'application/problem+json');
    // A string body keeps the content type (an object would be sent as application/json).
    return adapter.reply(response, JSON.stringify(exception.getResponse()), exception.getStatus());
  }
}
Catch(IamHttpException)(IamExceptionFilter);
Inject(HttpAdapterHost)(IamExceptionFilter, undefined, 0);

/** `@Iam()`: the handler's `{ token, claims, decision }`, or `undefined` on `@Public()` routes. */
export const Iam = createParamDecorator((_data: unknown, context: ExecutionContext): IamState | undefined => locate(context).holder?.iam as IamState | undefined);
