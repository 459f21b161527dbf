/** The vehicle-service on Fastify: GET /vehicle/:vin needs READ, PUT needs WRITE on VIN=<vin>; GET /vehicles lists the readable ones. */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Authorizer } from 'iam-authz';
import { iamAuthz } from 'iam-authz/fastify';
import { iamErrorAnswer, READABLE_VINS, VehicleStore, type RunningService } from './store.js';

interface VinRoute { Params: { vin: string }; Body: unknown }

export async function createFastifyApp(authorizer: Authorizer, store = new VehicleStore()): Promise<FastifyInstance> {
  const app = Fastify();
  // The plugin decorates request.iam and closes the authorizer when the app closes.
  await app.register(iamAuthz, { authorizer, realm: 'vehicle-service' });
  const vin = (req: { params: unknown }) => (req.params as { vin: string }).vin;

  app.get('/vehicles', { onRequest: app.iamAuthz.authenticate() }, async (req, reply) => {
    try {
      return store.list(await authorizer.accessible(req.iam!, READABLE_VINS));
    } catch (error) {
      const answer = iamErrorAnswer(error);
      if (!answer) throw error;
      return reply.code(answer.status).headers(answer.headers).type('application/problem+json').send(JSON.stringify(answer.body));
    }
  });
  app.get<VinRoute>('/vehicle/:vin', { preHandler: app.iamAuthz.requirePermission('vehicle-service', 'READ', 'VIN', vin) }, async (req, reply) => {
    const vehicle = store.get(req.params.vin);
    return vehicle ?? reply.code(404).send({ error: 'no such vehicle' });
  });
  app.put<VinRoute>('/vehicle/:vin', { preHandler: app.iamAuthz.requirePermission('vehicle-service', 'WRITE', 'VIN', vin) }, async (req) =>
    store.update(req.params.vin, req.body, req.iam?.claims.sub ?? 'unknown'));
  return app;
}

export async function startFastify(authorizer: Authorizer, port: number, host = '127.0.0.1'): Promise<RunningService> {
  const app = await createFastifyApp(authorizer);
  await app.listen({ port, host });
  const { port: bound } = app.server.address() as AddressInfo;
  return { url: `http://${host}:${bound}`, close: () => app.close() }; // onClose closes the authorizer
}
