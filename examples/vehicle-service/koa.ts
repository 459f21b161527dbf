/** The vehicle-service on Koa with @koa/router: GET /vehicle/:vin needs READ, PUT needs WRITE; GET /vehicles lists the readable ones. */
import Koa from 'koa';
import Router from '@koa/router';
import type { Authorizer } from 'iam-authz';
import { koaAuthz } from 'iam-authz/koa';
import { iamErrorAnswer, READABLE_VINS, runningService, VehicleStore, type RunningService } from './store.js';

async function jsonBody(ctx: Koa.Context): Promise<unknown> {
  let text = '';
  for await (const chunk of ctx.req) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > 16_384) ctx.throw(413);
  }
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return ctx.throw(400, 'body is not JSON');
  }
}

export function createKoaApp(authorizer: Authorizer, store = new VehicleStore()): Koa {
  const app = new Koa();
  const router = new Router();
  const { authenticate, requirePermission } = koaAuthz(authorizer, { realm: 'vehicle-service' });

  router.get('/vehicles', authenticate(), async (ctx) => {
    try {
      ctx.body = store.list(await authorizer.accessible(ctx.state.iam!, READABLE_VINS));
    } catch (error) {
      const answer = iamErrorAnswer(error);
      if (!answer) throw error;
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify(answer.body);
    }
  });

  router.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (ctx) => ctx.params.vin), (ctx) => {
    const vehicle = store.get(ctx.params.vin ?? '');
    if (vehicle) ctx.body = vehicle;
    else { ctx.status = 404; ctx.body = { error: 'no such vehicle' }; }
  });
  router.put('/vehicle/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', (ctx) => ctx.params.vin), async (ctx) => {
    ctx.body = store.update(ctx.params.vin ?? '', await jsonBody(ctx), ctx.state.iam?.claims.sub ?? 'unknown');
  });
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}

export async function startKoa(authorizer: Authorizer, port: number, host = '127.0.0.1'): Promise<RunningService> {
  const server = createKoaApp(authorizer).listen(port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return runningService(server, () => authorizer.close());
}
