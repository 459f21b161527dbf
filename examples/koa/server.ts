// Serves app.ts. IAM_BASE_URL: the IAM; PORT: where to listen.
import { auditRoutes } from 'iam-authz/koa';
import { app } from './app.js';

// Refuse to start with a hole: a route with no guard, or an object route whose guard never reads the object.
auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] });

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on ${JSON.stringify(server.address())}`);
});
