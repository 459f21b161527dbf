/**
 * The `iamAuthz` Fastify plugin: `request.iam`, `fastify.iamAuthz` and the authorizer closed with
 * the server, over the hooks of `hooks.ts`.
 */
import type { FastifyInstance, FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { Authorizer } from '../../src/index.js';
import { recordRoutes } from './route-record.js';
import { hooksOver, type FastifyAuthzOptions } from './hooks.js';

/** The plugin's own options besides `authorizer` (the hooks' options). */
const PLUGIN_OPTIONS = new Set(['realm', 'exposeDecision', 'retryAfterSec', 'passErrors', 'mode', 'onError']);

/** Options of the {@link iamAuthz} plugin: the hooks' options and the authorizer. */
export interface IamAuthzPluginOptions extends FastifyAuthzOptions {
  /** The authorizer to use; it is closed when the server closes. */
  authorizer: Authorizer;
}

/**
 * Registers `request.iam` (initially `null`), decorates the instance with `iamAuthz`
 * (`{ authenticate, requirePermission, requireAnyPermission, publicRoute }`), records the routes
 * registered after it for `auditRoutes`, and closes the authorizer on `onClose`.
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
      // For auditRoutes: the routes registered from now on (an onRoute hook; nothing per request).
      recordRoutes(fastify, hooks);
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
