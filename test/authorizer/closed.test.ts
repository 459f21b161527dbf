/**
 * After `close()` (issue #9 §6): `authenticate`, `authorize`, `check` and `ready` reject with 503
 * `ERR_AUTHORIZER_CLOSED` at once — even for a token that was cached — without reopening a
 * connection to the IAM and without hanging.
 */
import { expect, test } from 'vitest';
import { AuthorizerClosedError } from '../../src/index.js';
import { useIam } from '../helpers/index.js';

const iam = useIam();

test('every call after close() rejects with ERR_AUTHORIZER_CLOSED and makes no request', async () => {
  const authorizer = iam.authorizer();
  const token = iam.token();
  const identity = await authorizer.authenticate(`Bearer ${token}`); // cached now
  const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
  await authorizer.close();
  const jwksBefore = iam.requestsTo('jwks').length;
  const calls = [
    authorizer.authenticate(`Bearer ${token}`),
    authorizer.authenticate(iam.bearer({ jti: 'new' })),
    authorizer.authorize(identity, query),
    authorizer.check(`Bearer ${token}`, query),
    authorizer.ready(),
  ];
  for (const call of calls) {
    const error = await call.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizerClosedError);
    expect(error).toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED', status: 503 });
  }
  expect(iam.requestsTo('jwks').length).toBe(jwksBefore);
  await authorizer.close(); // still idempotent
});
