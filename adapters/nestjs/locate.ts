/**
 * Where a Nest request keeps what the guard needs, in every context (HTTP, GraphQL, WebSocket):
 * the `Authorization` value, the object `iam` is attached to, and the view a resolver reads.
 */
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { IamState } from '../../src/index.js';
import { header, wsAuthorization, type HeaderBag, type WsClient } from './authorization.js';

/** What a resource resolver sees of the request, whatever the context. */
export interface IamRequestView {
  /** `'http'`, `'graphql'` or `'ws'`. */
  readonly type: string;
  /** Route parameters (HTTP); `{}` elsewhere. */
  readonly params: Readonly<Record<string, string>>;
  /** Query string (HTTP); `{}` elsewhere. */
  readonly query: Readonly<Record<string, unknown>>;
  /** The parsed body (HTTP), or the message data (WebSocket). */
  readonly body: unknown;
  /** Request headers (HTTP and GraphQL over HTTP; the handshake's for WebSocket). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The GraphQL resolver's arguments; `{}` elsewhere. */
  readonly args: Readonly<Record<string, unknown>>;
  /** Nest's execution context, for anything else. */
  readonly context: ExecutionContext;
}

interface Located {
  /** Where `iam` is attached: the HTTP request, or the socket for WebSocket. */
  readonly holder: Record<string, unknown> | undefined;
  readonly authorization: string | undefined;
  readonly view: IamRequestView;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

type HttpLike = { headers?: HeaderBag; params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };

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
    const client = ws.getClient<WsClient>();
    const headers = client.handshake?.headers;
    return { holder: client, authorization: wsAuthorization(client), view: { type, params: EMPTY, query: EMPTY, body: ws.getData(), headers: headers ?? EMPTY, args: EMPTY, context } };
  }
  const request = context.switchToHttp().getRequest<HttpLike>();
  return {
    holder: request,
    authorization: header(request.headers),
    view: { type, params: request.params ?? EMPTY, query: request.query ?? EMPTY, body: request.body, headers: request.headers ?? EMPTY, args: EMPTY, context },
  };
}

/** `@Iam()`: the handler's `{ token, claims, decision }`, or `undefined` on `@Public()` routes. */
export const Iam = createParamDecorator((_data: unknown, context: ExecutionContext): IamState | undefined => locate(context).holder?.iam as IamState | undefined);
