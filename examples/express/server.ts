// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/express';
import { createApp } from './app.js';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const app = createApp(authorizer);
// Refuse to start with a hole: a route with no guard, or an object route that never checks its object.
auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] });

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on ${JSON.stringify(server.address())}`);
});
