/**
 * No token in any event: every channel of `channels`, subscribed as a plain channel and as a
 * tracing channel (start, end, asyncStart, asyncEnd, error), while valid and hostile traffic flows
 * — and every error, warning and answer on the way — is searched deeply for the token text, its
 * signature part alone, and the body an upstream sent.
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { channels, type Authorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { examplePolicy, json, KEY2, NOW_SEC, reachableText, servePolicy, startLoopback, useIam, type Loopback } from '../helpers/index.js';

const MARKER = 'UPSTREAM-BODY-MARKER-7f3c';
const WVW1 = { type: 'VIN', value: 'WVW1' };
const SERVICE = 'vehicle-service';

const iam = useIam();
let policy: Loopback;
let badJwks: Loopback;
const seen: unknown[] = [];
const warnings: Error[] = [];
const onWarning = (w: Error): void => { warnings.push(w); };
const plain = Object.values(channels).map((name) => [name, (message: unknown) => { seen.push(message); }] as const);
const record = (context: unknown): void => { seen.push(context); };
const traceHandlers = { start: record, end: record, asyncStart: record, asyncEnd: record, error: record };
const traced = Object.values(channels).map((name) => tracingChannel(name));

beforeAll(async () => {
  // The policy API: refuses tokens of app-refused, fails with a body for app-broken, serves app-1.
  policy = await startLoopback((req, res) => {
    const auth = req.headers.authorization ?? '';
    const payload = JSON.parse(Buffer.from(auth.split('.')[1] ?? '', 'base64url').toString() || '{}') as { app?: string };
    if (payload.app === 'app-refused') { json(res, 401, { error: MARKER, token: auth }); return; }
    if (payload.app === 'app-broken') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${MARKER} ${auth}`);
      return;
    }
    if (payload.app === 'app-garbled') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"${MARKER}": ${auth}`);
      return;
    }
    servePolicy(req, res, examplePolicy('c1', payload.app ?? 'app-1'));
  });
  badJwks = await startLoopback((req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`${MARKER} ${req.headers.authorization ?? ''}`);
  });
  for (const [name, fn] of plain) subscribe(name, fn);
  for (const channel of traced) channel.subscribe(traceHandlers);
  process.on('warning', onWarning);
});
afterAll(async () => {
  for (const [name, fn] of plain) unsubscribe(name, fn);
  for (const channel of traced) channel.unsubscribe(traceHandlers);
  process.off('warning', onWarning);
  await Promise.all([policy.close(), badJwks.close()]);
});

/** Runs `call`, keeping what it rejects with for the search (an identity carries its token by design). */
async function keep(call: () => Promise<unknown>): Promise<void> {
  await call().catch((error: unknown) => { seen.push({ rejected: error }); });
}

test('no event, error or warning carries a token, a signature or an upstream body', async () => {
  const authz: Authorizer = iam.authorizer({ policyUrl: policy.url, applications: ['app-1', 'app-refused', 'app-broken', 'app-garbled'], onDecision: (e) => { seen.push(e); } });
  const noKeys = iam.authorizer({ jwksUri: badJwks.url, policyUrl: policy.url });
  const tokens = [
    iam.token({ jti: 'valid' }),
    iam.token({ jti: 'refused', app: 'app-refused' }),
    iam.token({ jti: 'broken', app: 'app-broken' }),
    iam.token({ jti: 'garbled', app: 'app-garbled' }),
    iam.token({ jti: 'foreign', app: 'app-foreign' }),
    iam.token({ jti: 'expired', exp: NOW_SEC - 3600, iat: NOW_SEC - 7200 }),
    iam.token({ jti: 'issuer', iss: 'https://evil.example/authentication/v1' }),
    iam.token({ jti: 'audience', aud: 42 }),
    iam.token({ jti: 'unknown-kid' }, { kid: 'key-2' }, KEY2),
  ];
  const valid = tokens[0] as string;
  const [h, p, s] = valid.split('.') as [string, string, string];
  const tampered = [`${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`, `${h}.${p}`, `${h}.${p}.${s}.${s}`, `${valid}x`];
  const all = [...tokens, ...tampered];
  const guard = createGuards(authz).requirePermission(SERVICE, 'WRITE', 'VIN', () => 'WVW1');
  const authOnly = createGuards(authz).authenticate();
  for (const token of all) {
    for (const a of [authz, noKeys]) {
      await keep(() => a.authenticate(`Bearer ${token}`));
      await keep(() => a.check(`Bearer ${token}`, { service: SERVICE, permission: 'READ', resource: WVW1 }));
    }
    await keep(() => guard(`Bearer ${token}`, {}));
    await keep(() => authOnly(`Bearer ${token}`, {}));
    const identity = await authz.authenticate(`Bearer ${token}`).catch(() => undefined);
    if (!identity) continue;
    await keep(() => authz.authorize(identity, { service: SERVICE, permission: 'WRITE', resource: WVW1, mode: 'report' }));
    await keep(() => authz.authorizeMany(identity, [{ service: SERVICE, permission: 'READ', resource: WVW1 }, { service: SERVICE, permission: 'WRITE', resource: { node: 'n' } }]));
    await keep(() => authz.accessible(identity, { service: SERVICE, permission: 'READ', type: 'VIN', explain: true }));
    await keep(() => authz.permissionsFor(identity, { service: SERVICE, resource: WVW1 }));
  }
  // Stale service and revalidation of the valid application's policy.
  iam.clock.advance(61_000);
  await keep(() => authz.check(`Bearer ${valid}`, { service: SERVICE, permission: 'READ', resource: WVW1 }));
  await new Promise((resolve) => { setTimeout(resolve, 50); });

  const text = reachableText([seen, warnings.map((w) => ({ message: w.message, stack: w.stack }))]);
  const kinds = new Set(seen.map((m) => (m && typeof m === 'object' ? Object.keys(m).sort().join(',') : typeof m)));
  expect(kinds.size).toBeGreaterThan(5); // events of many kinds were seen
  expect(text).not.toContain(MARKER);
  for (const token of all) {
    const parts = token.split('.');
    expect(text.includes(token), 'a token').toBe(false);
    for (const part of parts.slice(1)) if (part.length > 16) expect(text.includes(part), 'a token part').toBe(false);
  }
});
