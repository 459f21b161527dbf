/**
 * `iam-authz/fastify`: `onRequest`/`preHandler` hooks for Fastify 5 (made in `hooks.ts`), (in
 * `plugin.ts`) a plugin that decorates the request, records the routes (`route-record.ts`) and
 * closes the authorizer with the server, and (in `audit.ts`) `auditRoutes`, what guards them. A
 * thin shim over the adapter kit (`iam-authz/adapter`); it reaches no internals but the adapters' entry.
 */
import type { Authorizer } from '../../src/index.js';
import { hooksOver, type FastifyAuthz, type FastifyAuthzOptions } from './hooks.js';

export type { FastifyAuthz, FastifyAuthzOptions, IamHook } from './hooks.js';
export { iamAuthz, type IamAuthzPluginOptions } from './plugin.js';
export { auditRoutes } from './audit.js';

/**
 * Fastify 5 hooks over `authorizer`: 401/403/503 answered as RFC 6750 challenges with problem+json
 * bodies, `request.iam` set on success. Throws a `TypeError` for an invalid option.
 */
export function fastifyAuthz(authorizer: Authorizer, options: FastifyAuthzOptions = {}): FastifyAuthz {
  return hooksOver(authorizer, options, 'fastifyAuthz');
}
