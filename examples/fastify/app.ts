// The example's app, built without listening (server.ts listens; test/examples/audit-examples.test.ts audits it).
import Fastify, { type FastifyInstance } from 'fastify';
import type { Authorizer } from 'iam-authz';
import { iamAuthz } from 'iam-authz/fastify';

export async function createApp(authorizer: Authorizer): Promise<FastifyInstance> {
  const app = Fastify();
  // First: the plugin records the routes registered after it (for auditRoutes), and closes the authorizer with the app.
  await app.register(iamAuthz, { authorizer });
  const { requirePermission, publicRoute } = app.iamAuthz;

  app.get<{ Params: { vin: string } }>('/vehicles/:vin', {
    preHandler: requirePermission('vehicle-service', 'READ', 'VIN', (req) => (req.params as { vin: string }).vin),
  }, async (req) => ({ vin: req.params.vin, readBy: req.iam?.claims.sub }));
  // Public on purpose, and marked so: the audit tells it from a forgotten guard.
  app.get('/health', { onRequest: publicRoute() }, async () => ({ ok: true }));
  return app;
}
