// The Koa app of this example, built without listening: server.ts serves it, and its test audits it.
// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service; GET /health is public on purpose.
import Router from '@koa/router';
import Koa from 'koa';
import { createAuthorizer } from 'iam-authz';
import { koaAuthz } from 'iam-authz/koa';

export const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const { requirePermission, publicRoute } = koaAuthz(authorizer);

export const router = new Router();
router.get('/health', publicRoute(), (ctx) => {
  ctx.body = { status: 'ok' };
});
router.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => ctx.params.vin), (ctx) => {
  ctx.body = { vin: ctx.params.vin, readBy: ctx.state.iam?.claims.sub };
});

export const app = new Koa().use(router.routes()).use(router.allowedMethods());
