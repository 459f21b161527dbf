/**
 * Server-sent events over Express and Fastify, read by a real HTTP client: a stream guarded by a
 * permission ends within 1.5 s of its token's `exp`, within 1.5 s of a revocation, and when a new
 * policy takes the permission away — each time with the code in its last event. Real time: tokens
 * expiring a couple of seconds ahead, an authorizer on `Date.now`.
 */
import { describe, expect, test } from 'vitest';
import { driverCanWrite, examplePolicy, useIam } from '../helpers/index.js';
import { read, startApp } from './apps.js';

const iam = useIam();
const sec = (): number => Math.floor(Date.now() / 1000);

describe.each(['express', 'fastify'] as const)('SSE over %s', (framework) => {
  test('the stream ends within 1.5 s of its token\'s exp, with ERR_TOKEN_EXPIRED', async () => {
    const authz = iam.authorizer({ now: Date.now, clockToleranceSec: 0 });
    const app = await startApp(framework, authz);
    try {
      const exp = sec() + 2;
      const stream = await read(`${app.url}/stream/WVW1`, iam.bearer({ iat: sec(), exp }));
      expect(stream.status).toBe(200);
      await stream.until('event: open');
      const ended = await stream.ended;
      expect(stream.text()).toContain('event: end\ndata: ERR_TOKEN_EXPIRED');
      expect(ended).toBeGreaterThanOrEqual(exp * 1000);
      expect(ended - exp * 1000).toBeLessThan(1_500);
      expect(authz.status().watches.open).toBe(0);
    } finally {
      await app.close();
    }
  });

  test('the stream ends within 1.5 s of a revocation, with ERR_TOKEN_REVOKED', async () => {
    const authz = iam.authorizer({ now: Date.now });
    const app = await startApp(framework, authz);
    try {
      const stream = await read(`${app.url}/stream/WVW1`, iam.bearer({ iat: sec(), exp: sec() + 60, jti: `sse-${framework}` }));
      await stream.until('event: open');
      // Held open a while first: the revocation, not the start, is what ends it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stream.text()).not.toContain('event: end');
      const revokedAt = Date.now();
      await authz.revoke({ jti: `sse-${framework}` });
      const ended = await stream.ended;
      expect(stream.text()).toContain('event: end\ndata: ERR_TOKEN_REVOKED');
      expect(ended - revokedAt).toBeLessThan(1_500);
      expect(authz.status().watches.open).toBe(0);
    } finally {
      await app.close();
    }
  });

  test('a new policy that takes the permission away ends the stream with ERR_PERMISSION_DENIED; one that keeps it does not', async () => {
    const authz = iam.authorizer({ now: Date.now, policy: { ttlMs: 1_000, minRefreshIntervalMs: 200 } });
    const app = await startApp(framework, authz);
    try {
      const stream = await read(`${app.url}/stream/WVW1`, iam.bearer({ iat: sec(), exp: sec() + 60 }));
      await stream.until('event: open');
      // A new changeId that still grants READ: the stream goes on.
      iam.policy = driverCanWrite('c2', 'app-1');
      for (let i = 0; i < 40 && authz.status().applications[iam.issuer]?.['app-1']?.changeId !== 'c2'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(authz.status().applications[iam.issuer]?.['app-1']?.changeId).toBe('c2');
      expect(stream.text()).not.toContain('event: end');
      // c3 takes READ away from DRIVER.
      iam.policy = { ...examplePolicy('c3', 'app-1'), roles: [{ key: 'DRIVER' }] };
      await stream.ended;
      expect(stream.text()).toContain('event: end\ndata: ERR_PERMISSION_DENIED');
      expect(authz.status().watches.open).toBe(0);
    } finally {
      await app.close();
    }
  });
});
