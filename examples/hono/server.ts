// Serves app.ts once its audit is clean. IAM_BASE_URL: the IAM; PORT: where to listen.
import { serve } from '@hono/node-server';
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/hono';
import { createApp } from './app.js';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const app = createApp(authorizer);

// Refuse to start with a hole: a route with no guard and no public mark, or an object route
// (`/vehicles/:vin`) whose guard never reads the object. The error names each route to fix.
auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] });

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`listening on ${JSON.stringify(info)}`);
});
