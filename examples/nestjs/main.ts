// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import { auditRoutes } from 'iam-authz/nestjs';
import { createApp } from './app.js';

const app = await createApp();
app.enableShutdownHooks();
// Refuse to start with a hole: a route with no guard, or an object route that never checks its object.
auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] });
await app.listen(Number(process.env.PORT ?? 3000));
console.log(`listening on ${JSON.stringify(app.getHttpServer().address())}`);
