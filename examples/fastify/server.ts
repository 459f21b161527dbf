// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import { createAuthorizer } from 'iam-authz';
import { auditRoutes } from 'iam-authz/fastify';
import { createApp } from './app.js';

const app = await createApp(createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' }));
await app.ready();
// Refuse to start with a hole: a route with no guard, or an object route whose guard never reads the object.
auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] });

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);
