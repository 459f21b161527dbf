// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import Router from '@koa/router';
import Koa from 'koa';
import { createAuthorizer } from 'iam-authz';
import { koaAuthz } from 'iam-authz/koa';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const { requirePermission } = koaAuthz(authorizer);

const router = new Router();
router.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => ctx.params.vin), (ctx) => {
  ctx.body = { vin: ctx.params.vin, readBy: ctx.state.iam?.claims.sub };
});

const app = new Koa().use(router.routes()).use(router.allowedMethods());
const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on ${JSON.stringify(server.address())}`);
});
