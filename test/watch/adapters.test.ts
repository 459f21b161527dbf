/**
 * `iam.signal` in every HTTP adapter: the watch of the request's own grant, made on first read and
 * closed with the response. A route that reads it gets a signal that aborts on revocation; a route
 * that does not makes no watch; once a response has ended, no watch is left open. Real HTTP on
 * 127.0.0.1, real tokens from the loopback IAM.
 */
import { describe, expect, test } from 'vitest';
import { useIam } from '../helpers/index.js';
import { eventually, FRAMEWORKS, read, startApp } from './apps.js';

const iam = useIam();

describe.each(FRAMEWORKS)('%s', (framework) => {
  test('a route that reads the signal: it aborts with ERR_TOKEN_REVOKED on revoke, and the stream ends', async () => {
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      const stream = await read(`${app.url}/stream/WVW1`, iam.bearer({ jti: `leaked-${framework}` }));
      expect(stream.status).toBe(200);
      await stream.until('event: open');
      expect(authz.status().watches.open).toBe(1);
      await authz.revoke({ jti: `leaked-${framework}` });
      await stream.ended;
      expect(stream.text()).toContain('event: end\ndata: ERR_TOKEN_REVOKED');
      await eventually(() => authz.status().watches.open === 0);
    } finally {
      await app.close();
    }
  });

  test('after authenticate() alone, the signal watches the token: revocation aborts it too', async () => {
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      const stream = await read(`${app.url}/me/stream`, iam.bearer({ sub: `user-${framework}` }));
      await stream.until('event: open');
      await authz.revoke({ sub: `user-${framework}` });
      await stream.ended;
      expect(stream.text()).toContain('data: ERR_TOKEN_REVOKED');
      await eventually(() => authz.status().watches.open === 0);
    } finally {
      await app.close();
    }
  });

  test('a route that never reads the signal makes no watch', async () => {
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      const token = iam.bearer();
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${app.url}/plain/WVW1`, { headers: { authorization: token } });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('0');
      }
      expect(authz.status().watches.open).toBe(0);
    } finally {
      await app.close();
    }
  });

  test('the client going away mid-stream closes the watch', async () => {
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      const stream = await read(`${app.url}/stream/WVW1`, iam.bearer());
      await stream.until('event: open');
      expect(authz.status().watches.open).toBe(1);
      await stream.cancel();
      await eventually(() => authz.status().watches.open === 0);
    } finally {
      await app.close();
    }
  });

  // The fetch guards never see the Response: the handler hands it to respond(state, response).
  test('a route that reads the signal: its watch is closed once the response has ended', async () => {
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      const res = await fetch(`${app.url}/quick/WVW1`, { headers: { authorization: iam.bearer() } });
      expect(await res.text()).toBe('1');
      await eventually(() => authz.status().watches.open === 0);
    } finally {
      await app.close();
    }
  });
});
