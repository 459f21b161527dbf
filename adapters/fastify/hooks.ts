/**
 * The Fastify hooks over the adapter kit, shared by `fastifyAuthz` (index.ts) and the `iamAuthz`
 * plugin (plugin.ts): one place both import, so neither imports the other.
 */
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Authorizer, IamAuthzError, IamState } from '../../src/index.js';
import { wrapGuards, type Guard, type GuardFactory, type GuardOptions } from '../../src/adapter/index.js';
import { closeWithNodeResponse, createInternalGuards, settledValue, withSignal } from '../../src/adapter/internal.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `iam-authz/fastify` hooks once the token is verified (and the permission granted); `null` before. */
    iam: IamState | null;
  }
  interface FastifyInstance {
    /** Added by the `iamAuthz` plugin. */
    iamAuthz: FastifyAuthz;
  }
}

/** Options of `fastifyAuthz` and of the `iamAuthz` plugin: the options every adapter shares, and `onError`. */
export interface FastifyAuthzOptions extends GuardOptions {
  /**
   * Renders 401/403/503 yourself; if the reply is not sent when it returns (or its promise settles),
   * the default answer is. Not with `passErrors`. Default: none.
   */
  onError?: (error: IamAuthzError, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

/** A hook usable as `onRequest` or `preHandler`. */
export type IamHook = preHandlerAsyncHookHandler;

/** `{ authenticate(), requirePermission(service, permission, type, resolve) | (…, { node: resolve }) }` as Fastify hooks. */
export type FastifyAuthz = GuardFactory<FastifyRequest, IamHook>;

/** The hooks; `name` is who the user called (`fastifyAuthz`, or the `iamAuthz` plugin), for messages. */
export function hooksOver(authorizer: Authorizer, options: FastifyAuthzOptions, name: string): FastifyAuthz {
  const guards = createInternalGuards<FastifyRequest>(authorizer, options, name, ['onError']);
  const { onError } = options;

  function hook(guard: Guard<FastifyRequest>): IamHook {
    return async function iamAuthzHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      // Used in another framework (Express passes (req, res, next), Koa (ctx, next)): answer 500 there.
      if (typeof (reply as Partial<FastifyReply> | undefined)?.code !== 'function' || typeof (reply as Partial<FastifyReply>).send !== 'function') {
        // Its first two arguments tell the framework; `arguments` would be made on every call.
        return guards.answerWrongFramework('fastify', [request, reply]) as undefined;
      }
      let state: IamState | undefined;
      try {
        const guarding = guard(request.headers.authorization, request);
        state = settledValue(guarding) ?? await guarding; // a cached answer is read, not awaited
      } catch (error) {
        return refuse(error, request, reply);
      }
      if (state) request.iam = withSignal(authorizer, state, reply.raw, closeWithNodeResponse);
    };
  }

  /** A guard's rejection, out of the hook so that the hook's frame stays small (it is copied at each await). */
  async function refuse(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // The hook returning normally is Fastify's "go on": a refusal always ends in an answer.
    const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, request, reply)), () => reply.sent);
    if (refusal.action === 'pass') throw refusal.error;
    if (refusal.action === 'answer') {
      const { answer } = refusal;
      await reply.code(answer.status).headers(answer.headers).type('application/problem+json').send(JSON.stringify(answer.body));
    }
  }

  return wrapGuards(guards, hook);
}
