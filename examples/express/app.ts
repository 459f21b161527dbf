// The example's routes, built without listening: server.ts starts them, the tests audit them.
import express from 'express';
import type { Authorizer } from 'iam-authz';
import { expressAuthz } from 'iam-authz/express';

export function createApp(authorizer: Authorizer): express.Express {
  const { requirePermission, publicRoute } = expressAuthz(authorizer);
  const app = express();
  // Anyone may ask whether the service is up: public on purpose, so the audit does not flag it.
  app.get('/health', publicRoute(), (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin as string), (req, res) => {
    res.json({ vin: req.params.vin, readBy: req.iam?.claims.sub });
  });
  return app;
}
