/**
 * Beyond a yes/no in every adapter (issue #11 §2, §4, §5), over real HTTP against Express 5,
 * Express 4, Koa and Fastify: `requireAnyPermission` (same 403 shape), `authenticate({ optional })`
 * (only a missing header is anonymous), report mode at the authorizer, adapter and route levels
 * (the narrowest wins; only 403s are relaxed), and the decision log.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer, DecisionEvent } from '../../src/index.js';
import { NOW_MS, useIam } from '../helpers/index.js';
import { FRAMEWORKS, startApp } from './apps.js';

// NestJS declares the same routes with @RequireAnyPermission, @Authenticated({ optional }) and route options.
const FUNCTION_ADAPTERS = FRAMEWORKS;

const iam = useIam();
let enforcing: Authorizer;
let reporting: Authorizer;
const events: DecisionEvent[] = [];
let alice: string;

beforeAll(() => {
  const policy = { minRefreshIntervalMs: 0 };
  enforcing = iam.authorizer({ policy, onDecision: (e) => { events.push(e); } });
  reporting = iam.authorizer({ policy, mode: 'report' });
  alice = iam.token({ sub: 'actor-alice', jti: 'jti-alice', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
});

async function get(url: string, authorization?: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Record<string, any> : {} };
}

describe.each(FUNCTION_ADAPTERS)('%s', (framework) => {
  test('requireAnyPermission: READ suffices where WRITE is missing; none held is the usual 403', async () => {
    const app = await startApp(framework, enforcing);
    try {
      const granted = await get(`${app.url}/any/WVW1`, `Bearer ${alice}`);
      expect(granted.status).toBe(200);
      expect(granted.body.decision.grantedBy).toStrictEqual({ role: 'DRIVER', service: 'vehicle-service', permission: 'READ' });
      const denied = await get(`${app.url}/any/WVW9`, `Bearer ${alice}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: 'ERR_PERMISSION_DENIED', status: 403, title: 'Forbidden' });
      expect((await get(`${app.url}/anymulti`, `Bearer ${alice}`)).status).toBe(403); // all resources, any permission each
      expect((await get(`${app.url}/any/WVW1`)).status).toBe(401);
    } finally {
      await app.close();
    }
  });

  test('authenticate({ optional: true }): no header is anonymous; any header present is checked', async () => {
    const app = await startApp(framework, enforcing);
    try {
      expect(await get(`${app.url}/optional`)).toMatchObject({ status: 200, body: { anonymous: true } });
      expect(await get(`${app.url}/optional`, `Bearer ${alice}`)).toMatchObject({ status: 200, body: { anonymous: false, sub: 'actor-alice' } });
      for (const bad of ['Bearer not-a-token', 'Bearer ', 'Basic dXNlcjpwdw==', '', iam.bearer({ exp: NOW_MS / 1000 - 60 })]) {
        expect((await get(`${app.url}/optional`, bad)).status, JSON.stringify(bad)).toBe(401);
      }
    } finally {
      await app.close();
    }
  });

  test('report mode: a route\'s own mode wins; a denial proceeds with shadow: true; 401 stays', async () => {
    const app = await startApp(framework, enforcing);
    try {
      const shadow = await get(`${app.url}/shadow/WVW1`, `Bearer ${alice}`);
      expect(shadow.status).toBe(200);
      expect(shadow.body).toMatchObject({ shadow: true, decision: { granted: false, reason: 'PERMISSION_NOT_GRANTED' } });
      expect((await get(`${app.url}/shadow/WVW1`)).status).toBe(401);
      expect((await get(`${app.url}/shadow/WVW1`, 'Bearer forged.token.here')).status).toBe(401);
      const logged = events.filter((e) => e.shadow);
      expect(logged.at(-1)).toMatchObject({ service: 'vehicle-service', permission: 'WRITE', reference: 'VIN=WVW1', granted: false, actor: 'actor-alice', jti: 'jti-alice', shadow: true });
      expect(JSON.stringify(events)).not.toContain(alice.split('.')[2]);
    } finally {
      await app.close();
    }
  });

  test('report mode at the adapter, and at the authorizer; a route set to enforce still enforces', async () => {
    for (const [authorizer, options] of [[enforcing, { mode: 'report' as const }], [reporting, {}]] as const) {
      const app = await startApp(framework, authorizer, options);
      try {
        const put = await fetch(`${app.url}/vehicle/WVW1`, { method: 'PUT', headers: { authorization: `Bearer ${alice}` } });
        expect(put.status).toBe(200);
        expect(await put.json()).toMatchObject({ shadow: true });
        expect((await get(`${app.url}/enforced/WVW1`, `Bearer ${alice}`)).status).toBe(403);
        expect((await get(`${app.url}/vehicle/WVW1`)).status).toBe(401);
      } finally {
        await app.close();
      }
    }
  });
});

describe('the decision log', () => {
  test('grants and denials with every field; grants sampled; a throwing hook does not break a request', async () => {
    const seen: DecisionEvent[] = [];
    const none = iam.authorizer({ decisionSampleRate: 0, onDecision: (e) => { seen.push(e); } });
    const throwing = iam.authorizer({ onDecision: () => { throw new Error('logger down'); } });
    const identity = await none.authenticate(`Bearer ${alice}`);
    const read = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
    const write = { ...read, permission: 'WRITE' } as const;
    await none.authorize(identity, read);
    await none.authorize(identity, write);
    expect(seen.map((e) => e.granted)).toStrictEqual([false]); // grants sampled at 0, denials always
    expect(seen[0]).toMatchObject({ time: NOW_MS, application: 'app-1', tenant: 'tenant-1', actor: 'actor-alice', roles: ['DRIVER'], changeId: expect.any(String) as unknown, shadow: false });
    const viaThrowing = await throwing.authenticate(`Bearer ${alice}`);
    expect((await throwing.authorize(viaThrowing, read)).granted).toBe(true);
  });

  test('options are checked: mode, onDecision, decisionSampleRate', () => {
    expect(() => iam.authorizer({ mode: 'audit' as never })).toThrow(/"mode"/);
    expect(() => iam.authorizer({ onDecision: 'log' as never })).toThrow(/"onDecision"/);
    expect(() => iam.authorizer({ decisionSampleRate: 2 })).toThrow(/"decisionSampleRate"/);
  });
});
