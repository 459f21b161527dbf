/**
 * Issue 9 §7 (endpoints): a JWKS or policy endpoint answering 404, 401/403, HTML or a redirect is
 * reported as a misconfiguration (URL and status) in the error, its diagnostics event and ready()'s
 * rejection, distinct from an outage; the client's 503 body names no upstream URL, host or text.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, JwksUnavailableError, type IamAuthzError } from '../../src/index.js';
import { toErrorResponse } from '../../src/adapter/index.js';
import { json, startLoopback, type Loopback } from '../helpers/index.js';
import { identityFor, READ, usePolicyApi } from '../policy/harness.js';
import { expectAuthzError, recordJwksEvents } from './harness.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

const html: Answer = (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end('<html>login</html>'); };
const status = (code: number): Answer => (_req, res) => { json(res, code, { error: 'x' }); };
const redirect: Answer = (_req, res) => { res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }); res.end(); };

const MISCONFIGURED: [name: string, answer: Answer, status: number][] = [
  ['404', status(404), 404],
  ['401', status(401), 401],
  ['403', status(403), 403],
  ['an HTML page', html, 200],
  ['a redirect', redirect, 302],
];
const OUTAGES: [name: string, answer: Answer][] = [
  ['500', status(500)],
  ['503', status(503)],
  ['a reset', (req) => { req.socket.destroy(); }],
  ['invalid JSON', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{'); }],
];

const RESPONSE_OPTIONS = { realm: 'api', exposeDecision: false, retryAfterSec: 5 };

/** The 503 answer a client would get: nothing of the upstream in it. */
function expectPlain503(error: IamAuthzError, server: Loopback): void {
  const response = toErrorResponse(error, RESPONSE_OPTIONS);
  expect(response.status).toBe(503);
  const text = JSON.stringify(response);
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain(server.url);
  expect(text).not.toMatch(/HTTP \d{3}|html|\.well-known|policy\/v1/);
}

describe('JWKS endpoint', () => {
  let server: Loopback;
  let answer: Answer = status(500);
  beforeAll(async () => { server = await startLoopback((req, res) => { answer(req, res); }); });
  afterAll(() => server.close());

  test.each(MISCONFIGURED)('%s: ready() rejects with a misconfiguration naming URL and status; the event says so', async (_name, a, code) => {
    answer = a;
    const events = recordJwksEvents(server.url);
    const authz = createAuthorizer({ baseUrl: server.url });
    try {
      const error = await expectAuthzError(authz.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(error).toBeInstanceOf(JwksUnavailableError);
      expect(error).toMatchObject({ misconfigured: true });
      expect(error.message).toMatch(/misconfigured/);
      expect(error.message).toContain(`${server.url}/authentication/v1/.well-known/jwks.json`);
      expect(error.message).toContain(String(code));
      expect(error.cause).toMatchObject({ misconfigured: true, ...(code === 200 ? {} : { statusCode: code }) });
      const [event] = await events.until(1);
      expect(event).toMatchObject({ type: 'failed', misconfigured: true });
      expectPlain503(error, server);
    } finally {
      events.dispose();
      await authz.close();
    }
  });

  test.each(OUTAGES)('%s: an outage, not a misconfiguration', async (_name, a) => {
    answer = a;
    const events = recordJwksEvents(server.url);
    const authz = createAuthorizer({ baseUrl: server.url });
    try {
      const error = await expectAuthzError(authz.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(error).toMatchObject({ misconfigured: false });
      expect(error.message).toMatch(/unavailable/);
      expect(error.message).toContain(server.url);
      const [event] = await events.until(1);
      expect(event).toMatchObject({ type: 'failed', misconfigured: false });
      expectPlain503(error, server);
    } finally {
      events.dispose();
      await authz.close();
    }
  });
});

describe('policy endpoint', () => {
  const ctx = usePolicyApi();
  const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 5_000 };
  // 401/403 to the caller's token are per caller: refusal.test.ts (misconfiguration when every token is refused).
  test.each(MISCONFIGURED.filter(([, , code]) => code !== 401 && code !== 403))('%s: 503 misconfiguration naming URL and status; the event says so', async (_name, a, code) => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (req, res) => { a(req, res); return true; };
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(error).toMatchObject({ misconfigured: true });
    expect(error.message).toMatch(/misconfigured/);
    expect(error.message).toContain(`${ctx.server.url}/policy/v1/roles`);
    expect(error.message).toContain(String(code));
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message).toMatchObject({ applicationId: ctx.app, misconfigured: true });
    expectPlain503(error, ctx.server);
  });

  test.each(OUTAGES)('%s: an outage, not a misconfiguration', async (_name, a) => {
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (req, res) => { a(req, res); return true; };
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(error).toMatchObject({ misconfigured: false });
    const [failed] = await ctx.events.until('failed');
    expect(failed!.message).toMatchObject({ misconfigured: false });
    expectPlain503(error, ctx.server);
  });

  test('with policyToken, 401 and 403 are misconfigurations too', async () => {
    for (const code of [401, 403]) {
      const authz = ctx.authorizer(P, { policyToken: () => Promise.resolve('service-token') });
      const id = await identityFor(authz, ctx.app);
      ctx.server.fault = (req, res) => { status(code)(req, res); return true; };
      const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
      expect(error).toMatchObject({ misconfigured: true });
      expect(error.message).toContain(`HTTP ${code}`);
    }
  });
});


