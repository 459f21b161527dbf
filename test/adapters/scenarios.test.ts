/**
 * One scenario table, run over real HTTP against Express 5, Express 4, Koa and Fastify: the
 * adapters must behave identically.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { KEY2, NOW_MS, useIam } from '../helpers/index.js';
import { FRAMEWORKS, startApp, type RunningApp } from './apps.js';

const iam = useIam();
/** An IAM that answers 500 to everything. */
const down = useIam({ down: 500 });
let ok: Authorizer;
let policyDown: Authorizer;
let jwksDown: Authorizer;
let tokens: Record<'alice' | 'bob' | 'expired' | 'wrongIssuer' | 'foreignKey', string>;

beforeAll(() => {
  // No refetch spacing: every request that needs the IAM asks it.
  const base = { jwks: { minRefreshIntervalMs: 0 }, policy: { minRefreshIntervalMs: 0 } };
  ok = iam.authorizer(base);
  policyDown = iam.authorizer({ ...base, policyUrl: down.policyUrl });
  jwksDown = iam.authorizer({ ...base, jwksUri: down.jwksUri });
  tokens = {
    alice: iam.token({ sub: 'actor-alice', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] }),
    bob: iam.token({ sub: 'actor-bob', ars: [{ r: ['OWNER'], c: ['VIN=WVW1', 'VIN=WVW2'], n: ['node-7'] }] }),
    expired: iam.token({ exp: NOW_MS / 1000 - 3600 }),
    wrongIssuer: iam.token({ iss: 'https://evil.example/authentication/v1' }),
    foreignKey: iam.token({}, { kid: 'key-1' }, KEY2),
  };
});

interface Scenario {
  name: string;
  method?: string;
  path: string;
  token?: keyof typeof tokens | 'garbage';
  authorizer?: 'policyDown' | 'jwksDown';
  status: number;
  code?: string;
  /** Expected WWW-Authenticate value (exact). */
  challenge?: string;
  /** The handler runs (and sees the identity). */
  handled?: boolean;
  sub?: string;
}

const realm = 'realm="vehicle-service"';
const invalid = (d: string) => `Bearer ${realm}, error="invalid_token", error_description="${d}"`;
const scope = `Bearer ${realm}, error="insufficient_scope", error_description="the caller lacks the permission this request needs"`;

const SCENARIOS: Scenario[] = [
  { name: 'no token', path: '/vehicle/WVW1', status: 401, code: 'ERR_TOKEN_MISSING', challenge: `Bearer ${realm}` },
  { name: 'garbage token', path: '/vehicle/WVW1', token: 'garbage', status: 401, code: 'ERR_TOKEN_INVALID', challenge: invalid('token is not a compact JWS') },
  { name: 'expired token', path: '/vehicle/WVW1', token: 'expired', status: 401, code: 'ERR_TOKEN_EXPIRED', challenge: invalid('token has expired') },
  { name: 'wrong issuer', path: '/vehicle/WVW1', token: 'wrongIssuer', status: 401, code: 'ERR_TOKEN_INVALID', challenge: invalid('token issuer is not the expected one') },
  { name: 'bad signature', path: '/vehicle/WVW1', token: 'foreignKey', status: 401, code: 'ERR_TOKEN_INVALID', challenge: invalid('token signature is invalid') },
  { name: 'granted: DRIVER reads', path: '/vehicle/WVW1', token: 'alice', status: 200, handled: true, sub: 'actor-alice' },
  { name: 'denied: DRIVER writes', method: 'PUT', path: '/vehicle/WVW1', token: 'alice', status: 403, code: 'ERR_PERMISSION_DENIED', challenge: scope },
  { name: 'granted: OWNER writes', method: 'PUT', path: '/vehicle/WVW1', token: 'bob', status: 200, handled: true, sub: 'actor-bob' },
  { name: 'other resource', path: '/vehicle/OTHER', token: 'alice', status: 403, code: 'ERR_PERMISSION_DENIED', challenge: scope },
  { name: 'node id granted', path: '/node/node-7', token: 'bob', status: 200, handled: true },
  { name: 'node id denied', path: '/node/node-7', token: 'alice', status: 403, code: 'ERR_PERMISSION_DENIED' },
  { name: 'async resolver', path: '/async/WVW1', token: 'alice', status: 200, handled: true },
  { name: 'several resources, one missing', path: '/multi', token: 'alice', status: 403, code: 'ERR_PERMISSION_DENIED' },
  { name: 'several resources, all held', path: '/multi', token: 'bob', status: 200, handled: true },
  { name: 'resolver returns nothing', path: '/empty', token: 'bob', status: 403, code: 'ERR_PERMISSION_DENIED' },
  { name: 'resolver throws', path: '/throws/WVW1', token: 'alice', status: 500 },
  { name: 'policy down', path: '/vehicle/WVW1', token: 'alice', authorizer: 'policyDown', status: 503, code: 'ERR_POLICY_UNAVAILABLE' },
  { name: 'JWKS down', path: '/vehicle/WVW1', token: 'alice', authorizer: 'jwksDown', status: 503, code: 'ERR_JWKS_UNAVAILABLE' },
  { name: 'HEAD granted', method: 'HEAD', path: '/vehicle/WVW1', token: 'alice', status: 200, handled: true },
  { name: 'HEAD without token', method: 'HEAD', path: '/vehicle/WVW1', status: 401, challenge: `Bearer ${realm}` },
  { name: 'OPTIONS without token', method: 'OPTIONS', path: '/me', status: 401, code: 'ERR_TOKEN_MISSING' },
  { name: 'OPTIONS with token', method: 'OPTIONS', path: '/me', token: 'alice', status: 204, handled: true },
  { name: 'authenticate only', path: '/me', token: 'bob', status: 200, handled: true, sub: 'actor-bob' },
];

describe.each(FRAMEWORKS)('%s', (framework) => {
  const apps: Partial<Record<'ok' | 'policyDown' | 'jwksDown', RunningApp>> = {};
  beforeAll(async () => {
    apps.ok = await startApp(framework, ok);
    apps.policyDown = await startApp(framework, policyDown);
    apps.jwksDown = await startApp(framework, jwksDown);
  });
  afterAll(async () => {
    await Promise.all(Object.values(apps).map((a) => a.close()));
  });

  test.each(SCENARIOS)('$name → $status', async (s) => {
    const app = apps[s.authorizer ?? 'ok']!;
    const before = app.handled.count;
    const headers: Record<string, string> = {};
    if (s.token) headers.authorization = `Bearer ${s.token === 'garbage' ? 'not-a-jwt' : tokens[s.token]}`;
    const res = await fetch(`${app.url}${s.path}`, { method: s.method ?? 'GET', headers });
    const text = await res.text();
    expect(res.status).toBe(s.status);
    expect(app.handled.count - before).toBe(s.handled ? 1 : 0);
    if (s.challenge !== undefined) expect(res.headers.get('www-authenticate')).toBe(s.challenge);
    if (s.status === 503) {
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('www-authenticate')).toBeNull();
    }
    if (s.method === 'HEAD') expect(text).toBe('');
    if (s.code !== undefined && s.method !== 'HEAD') {
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(body).toEqual({ type: 'about:blank', title: expect.any(String), status: s.status, detail: expect.any(String), code: s.code });
      for (const token of Object.values(tokens)) expect(text).not.toContain(token.split('.')[2]);
      expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack
    }
    if (s.sub !== undefined) expect((JSON.parse(text) as { sub: string }).sub).toBe(s.sub);
  });

  test('the server keeps serving after a resolver throws', async () => {
    const app = apps.ok!;
    const bad = await fetch(`${app.url}/throws/WVW1`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(bad.status).toBe(500);
    const good = await fetch(`${app.url}/vehicle/WVW1`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(good.status).toBe(200);
  });

  test('the handler sees the decision', async () => {
    const res = await fetch(`${apps.ok!.url}/vehicle/WVW1`, { headers: { authorization: `Bearer ${tokens.bob}` } });
    const body = (await res.json()) as { decision: Record<string, unknown> };
    expect(body.decision).toEqual({ granted: true, reference: 'VIN=WVW1', roles: ['OWNER'], grantedBy: { role: 'OWNER', service: 'vehicle-service', permission: 'READ' }, changeId: 'c1', reason: 'GRANTED' });
  });

  test('exposeDecision puts the decision in 403 bodies', async () => {
    const app = await startApp(framework, ok, { exposeDecision: true });
    try {
      const res = await fetch(`${app.url}/vehicle/WVW1`, { method: 'PUT', headers: { authorization: `Bearer ${tokens.alice}` } });
      expect(res.status).toBe(403);
      const body = (await res.json()) as { decision: Record<string, unknown> };
      expect(body.decision).toEqual({ granted: false, reference: 'VIN=WVW1', roles: ['DRIVER'], changeId: 'c1', reason: 'PERMISSION_NOT_GRANTED' });
    } finally {
      await app.close();
    }
  });

  test('quotes in the realm are escaped', async () => {
    const app = await startApp(framework, ok, { realm: 'say "hi" \\ bye' });
    try {
      const res = await fetch(`${app.url}/vehicle/WVW1`);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="say \\"hi\\" \\\\ bye"');
    } finally {
      await app.close();
    }
  });
});
