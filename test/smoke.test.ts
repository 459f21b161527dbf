import { expect, test } from 'vitest';
import { createAuthorizer } from '../src/index.js';
import { useIam } from './helpers/index.js';

const iam = useIam();

test('verifies a token against a loopback JWKS and authorizes against a loopback policy API', async () => {
  const authz = createAuthorizer({ baseUrl: iam.url, now: iam.clock.now });
  const token = iam.token();
  const id = await authz.authenticate(`Bearer ${token}`);
  expect(id.claims.sub).toBe('actor-alice');
  expect(id.claims.ars).toEqual([{ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] }]);
  await expect(authz.authenticate('Bearer abc.def.ghi')).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID', status: 401 });
  const read = await authz.authorize(id, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
  expect(read).toEqual({ granted: true, reference: 'VIN=WVW1', roles: ['DRIVER'], grantedBy: { role: 'DRIVER', service: 'vehicle-service', permission: 'READ' }, changeId: 'c1', reason: 'GRANTED' });
  expect(iam.requestsTo('policy')[0]!.headers.authorization).toBe(`Bearer ${token}`);
  const write = await authz.authorize(id, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } });
  expect(write.reason).toBe('PERMISSION_NOT_GRANTED');
  await expect(authz.check(`Bearer ${token}`, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } }))
    .rejects.toMatchObject({ code: 'ERR_PERMISSION_DENIED', status: 403, decision: { reason: 'PERMISSION_NOT_GRANTED' } });
  await authz.close();
});
