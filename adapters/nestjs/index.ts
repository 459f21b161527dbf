/**
 * `iam-authz/nestjs`: `IamAuthzModule`, `IamGuard` and the `@RequirePermission`, `@Authenticated`,
 * `@Public` and `@Iam` decorators for NestJS 11 (Express and Fastify platforms, GraphQL,
 * WebSocket gateways), and `auditRoutes`. Imports the public core, the adapters' internal entry and Nest.
 */
export { IamAuthzModule, IAM_AUTHORIZER, type IamAuthzModuleOptions, type IamAuthzAsyncOptions, type NestAuthzOptions } from './module.js';
export { IamGuard } from './guard.js';
export { IamHttpException, IamExceptionFilter } from './exception.js';
export { Iam, type IamRequestView } from './locate.js';
export { RequirePermission, RequireAnyPermission, Authenticated, Public, type NestResourceResolver } from './requirements.js';
export { auditRoutes } from './audit.js';
