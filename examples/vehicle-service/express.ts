/**
 * The vehicle-service on Express: GET /vehicle/:vin needs READ, PUT needs WRITE on VIN=<vin>;
 * GET /vehicles lists the vehicles the caller may read, from its token alone.
 */
import express from 'express';
import type { Authorizer } from 'iam-authz';
import { expressAuthz } from 'iam-authz/express';
import { iamErrorAnswer, READABLE_VINS, runningService, VehicleStore, type RunningService } from './store.js';

export function createExpressApp(authorizer: Authorizer, store = new VehicleStore()): express.Express {
  const app = express();
  const { authenticate, requirePermission } = expressAuthz(authorizer, { realm: 'vehicle-service' });
  const vin = (req: express.Request) => req.params.vin as string;

  app.get('/vehicles', authenticate(), async (req, res) => {
    try {
      res.json(store.list(await authorizer.accessible(req.iam!, READABLE_VINS)));
    } catch (error) {
      const answer = iamErrorAnswer(error);
      if (!answer) throw error;
      res.status(answer.status).set(answer.headers).type('application/problem+json').send(JSON.stringify(answer.body));
    }
  });
  app.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', vin), (req, res) => {
    const vehicle = store.get(vin(req));
    if (vehicle) res.json(vehicle);
    else res.status(404).json({ error: 'no such vehicle' });
  });
  app.put('/vehicle/:vin', requirePermission('vehicle-service', 'WRITE', 'VIN', vin), express.json(), (req, res) => {
    res.json(store.update(vin(req), req.body, req.iam?.claims.sub ?? 'unknown'));
  });
  return app;
}

export async function startExpress(authorizer: Authorizer, port: number, host = '127.0.0.1'): Promise<RunningService> {
  const server = createExpressApp(authorizer).listen(port, host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return runningService(server, () => authorizer.close());
}
