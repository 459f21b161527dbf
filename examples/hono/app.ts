// The example's routes, built without listening: server.ts audits and serves them, the tests audit them too.
import { Hono } from 'hono';
import type { Authorizer } from 'iam-authz';
import { honoAuthz } from 'iam-authz/hono';

export function createApp(authorizer: Authorizer): Hono {
  const { requirePermission, publicRoute } = honoAuthz(authorizer);
  const app = new Hono();
  // Anyone may call it, on purpose: auditRoutes reports it 'public' rather than 'unguarded'.
  app.get('/health', publicRoute(), (c) => c.json({ ok: true }));
  // GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service.
  app.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (c) => c.req.param('vin')), (c) => {
    return c.json({ vin: c.req.param('vin'), readBy: c.get('iam')?.claims.sub });
  });
  return app;
}
