// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import Fastify from 'fastify';
import { createAuthorizer } from 'iam-authz';
import { fastifyAuthz } from 'iam-authz/fastify';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const { requirePermission } = fastifyAuthz(authorizer);

const app = Fastify();
app.get<{ Params: { vin: string } }>('/vehicles/:vin', {
  preHandler: requirePermission('vehicle-service', 'READ', 'VIN', (req) => (req.params as { vin: string }).vin),
}, async (req) => ({ vin: req.params.vin, readBy: req.iam?.claims.sub }));

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);
