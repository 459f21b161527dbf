/**
 * `ready()` with several issuers reports per issuer: one IAM down does not make it reject while
 * another is up (that issuer's tokens still get 503); every issuer down still rejects.
 */
import { expect, test } from 'vitest';
import { useIam } from '../helpers/index.js';

/** Two IAMs: one up, one answering 503. */
const iamUp = useIam();
const iamDown = useIam({ down: 503 });

const jwks = { timeoutMs: 2_000, minRefreshIntervalMs: 1_000 };

test('one issuer down: ready() resolves with a report naming it; its tokens get 503, the other\'s verify', async () => {
  const [up, down] = [iamUp, iamDown];
  const issuers = [up.issuer, down.issuer];
  const authz = up.authorizer({ issuer: issuers, jwks });
  const report = await authz.ready();
  expect(report).toStrictEqual({
    issuers: {
      [issuers[0]!]: { ready: true },
      [issuers[1]!]: { ready: false, code: 'ERR_JWKS_UNAVAILABLE', misconfigured: false, message: expect.stringContaining('503') as string },
    },
    revocations: 'none',
  });
  expect(JSON.parse(JSON.stringify(report))).toStrictEqual(report);
  await expect(authz.authenticate(up.bearer())).resolves.toMatchObject({ claims: { iss: issuers[0] } });
  await expect(authz.authenticate(down.bearer())).rejects.toMatchObject({ status: 503 });
  expect(authz.status().issuers[issuers[1]!]).toMatchObject({ state: 'cold', consecutiveFailures: 1 });
});

test('every issuer down: ready() rejects with a 503', async () => {
  iamUp.down = 503;
  const [a, b] = [iamUp, iamDown];
  const authz = a.authorizer({ issuer: [a.issuer, b.issuer], jwks });
  await expect(authz.ready()).rejects.toMatchObject({ status: 503, code: 'ERR_JWKS_UNAVAILABLE' });
});
