/**
 * A refusal in Nest's terms: the exception `IamGuard` throws for 401/403/503 in each context, and
 * the filter that renders it over HTTP exactly as the other adapters answer.
 */
import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IamAuthzError } from '../../src/index.js';
import type { ErrorResponse } from '../../src/adapter/index.js';

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

/**
 * What to throw for `error` in a context of `type`. Gateways answer only `WsException`s to the
 * client; a GraphQL error's `extensions` are the problem body (`extensions.status` the HTTP status
 * the other adapters send; the HTTP answer stays 200 with `errors[]`). Both are loaded on first use,
 * so that HTTP-only applications need neither @nestjs/websockets nor graphql.
 */
export async function exceptionFor(type: string, error: IamAuthzError, answer: ErrorResponse): Promise<Error> {
  if (type === 'ws') {
    const { WsException } = await import('@nestjs/websockets');
    return new WsException({ ...answer.body });
  }
  if (type === 'graphql') {
    const { GraphQLError } = await import('graphql');
    return new GraphQLError(answer.body.detail, { extensions: { ...answer.body } });
  }
  return new IamHttpException(error, answer);
}

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
