/**
 * `authorizer.revoke`: a leaked token refused before its `exp` — by `authenticate()` and by every
 * guard, cached or not, as a 401 `ERR_TOKEN_REVOKED` with `error="invalid_token"` — as soon as the
 * promise resolves; a subject's later tokens work. Real loopback IAM, real signatures, a real
 * Express app on loopback.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, test } from 'vitest';
import { expressAuthz } from '../../adapters/express/index.js';
import { NOW_SEC, useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();
const READ = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;

async function serve(authz: ReturnType<typeof iam.authorizer>): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.get('/vehicles/:vin', expressAuthz(authz).requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.params.vin as string), (_req, res) => { res.json({ ok: true }); });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

describe('revoke', () => {
  test('{ jti }: the token is refused at once, cached or not, through authenticate and a guard; others are not', async () => {
    const authz = iam.authorizer();
    const leaked = iam.bearer({ jti: 'leaked-1' });
    const other = iam.bearer({ jti: 'other-1' });
    const app = await serve(authz);
    try {
      // Verified and cached first: the revocation must beat the cache.
      await authz.authenticate(leaked);
      expect((await fetch(`${app.url}/vehicles/WVW1`, { headers: { authorization: leaked } })).status).toBe(200);
      await authz.revoke({ jti: 'leaked-1' });
      await expect(authz.authenticate(leaked)).rejects.toMatchObject({ status: 401, code: 'ERR_TOKEN_REVOKED' });
      const res = await fetch(`${app.url}/vehicles/WVW1`, { headers: { authorization: leaked } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="iam", error="invalid_token"/);
      expect(await res.json()).toMatchObject({ code: 'ERR_TOKEN_REVOKED', status: 401 });
      expect((await fetch(`${app.url}/vehicles/WVW1`, { headers: { authorization: other } })).status).toBe(200);
      await expect(authz.check(leaked, READ)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
      expect(authz.status().revocations).toEqual({ entries: 1, collapsed: false, loaded: 'none' });
    } finally {
      await app.close();
    }
  });

  test('{ sub }: the subject\'s tokens issued before are refused; one issued after works; other subjects are not touched', async () => {
    const authz = iam.authorizer();
    const old = iam.bearer({ jti: 'a1', iat: NOW_SEC - 60 });
    await authz.authenticate(old);
    await authz.revoke({ sub: 'actor-alice' });
    await expect(authz.authenticate(old)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    iam.clock.advance(2_000);
    expect((await authz.authenticate(iam.bearer({ jti: 'a2', iat: NOW_SEC + 2 }))).claims.sub).toBe('actor-alice');
    expect((await authz.authenticate(iam.bearer({ jti: 'b1', sub: 'actor-bob', iat: NOW_SEC - 60 }))).claims.sub).toBe('actor-bob');
  });

  test('{ sub, issuedBefore }: the moment given, in seconds', async () => {
    const authz = iam.authorizer();
    await authz.revoke({ sub: 'actor-alice', issuedBefore: NOW_SEC - 30 });
    await expect(authz.authenticate(iam.bearer({ jti: 'x1', iat: NOW_SEC - 31 }))).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    expect((await authz.authenticate(iam.bearer({ jti: 'x2', iat: NOW_SEC - 30 }))).claims.jti).toBe('x2');
  });

  test('a revocation ends when the tokens it matches have expired (revocation.retainSec)', async () => {
    const authz = iam.authorizer({ revocation: { retainSec: 60 } });
    await authz.revoke({ jti: 'short' });
    expect(authz.status().revocations.entries).toBe(1);
    iam.clock.advance(61_000);
    expect(authz.status().revocations.entries).toBe(0);
  });

  test('anything else than { jti } or { sub, issuedBefore? } is a TypeError; a closed authorizer refuses', async () => {
    const authz = iam.authorizer();
    for (const bad of [undefined, null, 'jti-1', {}, { jti: '' }, { sub: 'a', jti: 'b' }, { sub: 'a', issuedBefore: 'yesterday' }, { app: 'x' }]) {
      await expect(authz.revoke(bad as never)).rejects.toThrow(TypeError);
    }
    expect(() => iam.authorizer({ revocation: { retainSec: 0 } })).toThrow(/"revocation.retainSec"/);
    expect(() => iam.authorizer({ revocation: { keep: 1 } as never })).toThrow(/revocation/);
    await authz.close();
    await expect(authz.revoke({ jti: 'x' })).rejects.toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED' });
  });
});
