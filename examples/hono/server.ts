// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createAuthorizer } from 'iam-authz';
import { honoAuthz } from 'iam-authz/hono';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const { requirePermission } = honoAuthz(authorizer);

const app = new Hono();
app.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (c) => c.req.param('vin')), (c) => {
  return c.json({ vin: c.req.param('vin'), readBy: c.get('iam')?.claims.sub });
});

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`listening on ${JSON.stringify(info)}`);
});
