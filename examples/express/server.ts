// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import express from 'express';
import { createAuthorizer } from 'iam-authz';
import { expressAuthz } from 'iam-authz/express';

const authorizer = createAuthorizer({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' });
const { requirePermission } = expressAuthz(authorizer);

const app = express();
app.get('/vehicles/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin as string), (req, res) => {
  res.json({ vin: req.params.vin, readBy: req.iam?.claims.sub });
});

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on ${JSON.stringify(server.address())}`);
});
