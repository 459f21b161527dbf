/**
 * `iam-authz/fastify`: `onRequest`/`preHandler` hooks for Fastify 5, and a plugin that decorates
 * the request and closes the authorizer with the server. A thin shim over the core's
 * framework-neutral guards; it imports only the public core.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Authorizer, IamAuthzError } from '../../src/index.js';
import { createGuards, wrapGuards, type Guard, type GuardFactory, type GuardOptions, type IamState } from '../../src/adapter/index.js';

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

/**
 * Fastify 5 hooks over `authorizer`: 401/403/503 answered as RFC 6750 challenges with problem+json
 * bodies, `request.iam` set on success. Throws a `TypeError` for an invalid option.
 */
export function fastifyAuthz(authorizer: Authorizer, options: FastifyAuthzOptions = {}): FastifyAuthz {
  return hooksOver(authorizer, options, 'fastifyAuthz');
}

/** The hooks; `name` is who the user called (`fastifyAuthz`, or the `iamAuthz` plugin), for messages. */
function hooksOver(authorizer: Authorizer, options: FastifyAuthzOptions, name: string): FastifyAuthz {
  const guards = createGuards<FastifyRequest>(authorizer, options, name, ['onError']);
  const { onError } = options;

  function hook(guard: Guard<FastifyRequest>): IamHook {
    return async function iamAuthzHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      // Used in another framework (Express passes (req, res, next), Koa (ctx, next)): answer 500 there.
      if (typeof (reply as Partial<FastifyReply> | undefined)?.code !== 'function' || typeof (reply as Partial<FastifyReply>).send !== 'function') {
        // eslint-disable-next-line prefer-rest-params -- exactly what the other framework passed
        return guards.answerWrongFramework('fastify', Array.from(arguments)) as undefined;
      }
      let state: IamState | undefined;
      try {
        state = await guard(request.headers.authorization, request);
      } catch (error) {
        // The hook returning normally is Fastify's "go on": a refusal always ends in an answer.
        const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, request, reply)), () => reply.sent);
        if (refusal.action === 'pass') throw refusal.error;
        if (refusal.action === 'answer') {
          const { answer } = refusal;
          await reply.code(answer.status).headers(answer.headers).type('application/problem+json').send(JSON.stringify(answer.body));
        }
        return;
      }
      if (state) request.iam = state;
    };
  }

  return wrapGuards(guards, hook);
}

/** The plugin's own options besides `authorizer` (the hooks' options). */
const PLUGIN_OPTIONS = new Set(['realm', 'exposeDecision', 'retryAfterSec', 'passErrors', 'mode', 'onError']);

export interface IamAuthzPluginOptions extends FastifyAuthzOptions {
  /** The authorizer to use; it is closed when the server closes. */
  authorizer: Authorizer;
}

/**
 * Registers `request.iam` (initially `null`), decorates the instance with `iamAuthz`
 * (`{ authenticate, requirePermission }`) and closes the authorizer on `onClose`.
 */
export const iamAuthz: FastifyPluginCallback<IamAuthzPluginOptions> = fp(
  function iamAuthzPlugin(fastify: FastifyInstance, options: IamAuthzPluginOptions, done: (err?: Error) => void) {
    // A callback-style plugin that throws takes the process down: every mistake (no authorizer,
    // a bad option, registered twice) goes to done(), so register()/ready() reject with it.
    try {
      if (fastify.hasDecorator('iamAuthz')) throw new TypeError('iamAuthz: the plugin is already registered on this instance');
      // Fastify's own register options (`prefix`, `logLevel`, …) are not ours to validate.
      const { authorizer, prefix: _prefix, logLevel: _logLevel, logSerializers: _logSerializers, ...rest } = ((options as IamAuthzPluginOptions | null) ?? {}) as IamAuthzPluginOptions & Record<'prefix' | 'logLevel' | 'logSerializers', unknown>;
      if (typeof (authorizer as Partial<Authorizer> | null | undefined)?.check !== 'function') {
        // The usual mistake is createAuthorizer's options in place of the plugin's: say what to pass.
        const given = Object.keys(rest).filter((key) => !PLUGIN_OPTIONS.has(key));
        throw new TypeError(`iamAuthz: pass the "authorizer" option, an Authorizer made with createAuthorizer({ baseUrl, … })${given.length > 0 ? `, not createAuthorizer's own options (got ${given.slice(0, 5).map((k) => `"${k}"`).join(', ')})` : ''}`);
      }
      const hooks = hooksOver(authorizer, rest, 'iamAuthz');
      fastify.decorateRequest('iam', null);
      fastify.decorate('iamAuthz', hooks);
      fastify.addHook('onClose', async () => {
        await authorizer.close();
      });
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  },
  { fastify: '5.x', name: 'iam-authz' },
);
