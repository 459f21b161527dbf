/**
 * The `logger` option against the troubleshooting page: each symptom of
 * docs/errors-and-troubleshooting.md ("every request is 401", "403 but the role is granted", "503
 * after a while", "works locally, not in Kubernetes") is produced with real servers, real keys and
 * real signatures, and the logged line must name its cause. No line, at any level, holds the token
 * or any of its three parts.
 */
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { createGuards } from '../../src/adapter/index.js';
import type { Logger } from '../../src/lib/logger.js';
import type { Authorizer } from '../../src/index.js';
import { Clock, KEY2, reachableText, startLoopback, useIam, VEHICLE, type Loopback } from '../helpers/index.js';

interface Line { level: string; args: unknown[]; message: string; fields: Record<string, unknown> }

/** A logger that keeps every call, as pino would receive it: `(fields, message)`. */
function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (...args: unknown[]): void => {
    lines.push({ level, args, message: String(args[1]), fields: args[0] as Record<string, unknown> });
  };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const iam = useIam();
let notFound: Loopback;
const tokens: string[] = [];
const everyLine: Line[] = [];
const WVW1 = { type: 'VIN', value: 'WVW1' };

/** The warn lines about refused requests (503s); fetch failures have lines of their own. */
const unavailable = (lines: Line[]): Line[] => lines.filter((l) => l.level === 'warn' && (l.fields as { event?: unknown }).event === 'iam-authz.unavailable');

/** A token of this file, remembered for the final "no token in any line" search. */
function token(overrides: Record<string, unknown> = {}, key?: Parameters<typeof iam.token>[2]): string {
  const t = iam.token({ jti: `log-${tokens.length}`, ...overrides }, {}, key);
  tokens.push(t);
  return t;
}

function setup(options: Record<string, unknown> = {}): { authz: Authorizer; lines: Line[]; clock: Clock } {
  const { logger, lines } = capture();
  const clock = new Clock();
  const authz = iam.authorizer({ now: clock.now, logger, ...options });
  afterLines.push(lines);
  return { authz, lines, clock };
}
const afterLines: Line[][] = [];

beforeAll(async () => {
  notFound = await startLoopback((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<html>not here</html>');
  });
});
afterEach(() => {
  for (const lines of afterLines.splice(0)) everyLine.push(...lines);
});
afterAll(async () => {
  await notFound.close();
  // The deep search: every argument of every line, at every level, for each token and each part.
  expect(everyLine.length).toBeGreaterThan(10);
  const text = reachableText(everyLine.map((l) => l.args));
  for (const t of tokens) {
    expect(text).not.toContain(t);
    for (const part of t.split('.')) expect(text).not.toContain(part);
  }
});

const debugLine = (lines: Line[]): Line => {
  const found = lines.filter((l) => l.level === 'debug');
  expect(found).toHaveLength(1);
  return found[0] as Line;
};

test('every request is 401: no token → ERR_TOKEN_MISSING at debug', async () => {
  const { authz, lines } = setup();
  await expect(authz.authenticate(undefined)).rejects.toMatchObject({ code: 'ERR_TOKEN_MISSING' });
  const line = debugLine(lines);
  expect(line.message).toMatch(/^ERR_TOKEN_MISSING: /);
  expect(line.fields).toMatchObject({ event: 'iam-authz.refused', code: 'ERR_TOKEN_MISSING', status: 401 });
});

test('every request is 401 / works locally, not in Kubernetes: the issuer mismatch names both issuers', async () => {
  // The token says 127.0.0.1, the service was configured with localhost: the first-hour mistake.
  const { authz, lines } = setup({ baseUrl: iam.url.replace('127.0.0.1', 'localhost'), jwksUri: iam.jwksUri, policyUrl: iam.policyUrl });
  await expect(authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  const line = debugLine(lines);
  expect(line.message).toContain(`ERR_TOKEN_INVALID: token issuer "${iam.url}/authentication/v1" is not the expected "${iam.url.replace('127.0.0.1', 'localhost')}/authentication/v1"`);
});

test('every request is 401: a tenant not in "audience", a key of another IAM, an expired token', async () => {
  const { authz, lines } = setup({ audience: 'tenant-9' });
  await expect(authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  expect(debugLine(lines).message).toMatch(/^ERR_TOKEN_INVALID: .*tenant/);

  const other = setup();
  await expect(other.authz.authenticate(`Bearer ${token({}, KEY2)}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  expect(debugLine(other.lines).message).toMatch(/^ERR_TOKEN_INVALID: no key .*kid/);

  const late = setup();
  late.clock.advance(2 * 3600_000);
  await expect(late.authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_EXPIRED' });
  expect(debugLine(late.lines).message).toMatch(/^ERR_TOKEN_EXPIRED: /);
});

test('403 but the role is granted: PERMISSION_NOT_GRANTED names the token\'s roles and the roles that would grant', async () => {
  const { authz, lines } = setup();
  const identity = await authz.authenticate(`Bearer ${token()}`);
  expect((await authz.authorize(identity, { service: VEHICLE, permission: 'WRITE', resource: WVW1 })).granted).toBe(false);
  const line = debugLine(lines);
  expect(line.fields).toMatchObject({
    event: 'iam-authz.denied', code: 'ERR_PERMISSION_DENIED', reason: 'PERMISSION_NOT_GRANTED',
    service: VEHICLE, permission: 'WRITE', reference: 'VIN=WVW1', roles: ['DRIVER'], grantingRoles: ['OWNER'], changeId: 'c1',
  });
  expect(line.message).toBe(`ERR_PERMISSION_DENIED: PERMISSION_NOT_GRANTED: ${VEHICLE} WRITE on VIN=WVW1 for actor-alice of application app-1; the token's roles on it: [DRIVER]; roles that would grant it: [OWNER] (policy c1)`);
  // Winston reads the first argument as its message: its text is the sentence.
  expect(String(line.args[0])).toBe(line.message);
});

test('403 but the role is granted: a typo in the permission or service, a reference of another case, a role not in the policy', async () => {
  const { authz, lines } = setup();
  const identity = await authz.authenticate(`Bearer ${token({ ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }, { r: ['MECHANIC'], c: ['VIN=WVW2'] }] })}`);
  const ask = async (query: Parameters<typeof authz.authorize>[1]): Promise<Line> => {
    lines.length = 0;
    expect((await authz.authorize(identity, query)).granted).toBe(false);
    return debugLine(lines);
  };
  // `write` for `WRITE`: no role grants the lower-case key, which the empty list shows.
  expect((await ask({ service: VEHICLE, permission: 'write', resource: WVW1 })).message).toMatch(/PERMISSION_NOT_GRANTED: .* write on VIN=WVW1 .*roles on it: \[DRIVER\]; roles that would grant it: \[\]/);
  expect((await ask({ service: 'vehicles', permission: 'READ', resource: WVW1 })).message).toMatch(/NO_SERVICE_POLICY: vehicles READ on VIN=WVW1 .*\[DRIVER\]; roles that would grant it: \[\]/);
  expect((await ask({ service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'wvw1' } })).message).toMatch(/NO_MATCHING_REFERENCE: .* READ on VIN=wvw1 .*roles on it: \[\]; roles that would grant it: \[DRIVER, OWNER\]/);
  expect((await ask({ service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW2' } })).message).toMatch(/ROLE_NOT_IN_POLICY: .*roles on it: \[MECHANIC\]; roles that would grant it: \[DRIVER, OWNER\]/);
  expect((await ask({ service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: '' } })).fields).toMatchObject({ reason: 'INVALID_RESOURCE' });
});

test('a guard\'s denial logs the service, permission and reference, once', async () => {
  const { authz, lines } = setup();
  const guard = createGuards(authz).requirePermission(VEHICLE, 'WRITE', 'VIN', () => 'WVW1');
  await expect(guard(`Bearer ${token()}`, {})).rejects.toMatchObject({ status: 403, code: 'ERR_PERMISSION_DENIED' });
  expect(debugLine(lines).fields).toMatchObject({ reason: 'PERMISSION_NOT_GRANTED', service: VEHICLE, permission: 'WRITE', reference: 'VIN=WVW1', grantingRoles: ['OWNER'] });
});

test('503 after a while: a JWKS URL answering 404 is a warn line naming the URL and status, a few per minute', async () => {
  const { authz, lines, clock } = setup({ jwksUri: `${notFound.url}/wrong/jwks.json` });
  for (let i = 0; i < 8; i++) {
    await expect(authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
    clock.advance(1_000);
  }
  const warns = unavailable(lines);
  expect(warns).toHaveLength(3);
  expect(warns[0]?.message).toContain(`${notFound.url}/wrong/jwks.json`);
  expect(warns[0]?.message).toContain('404');
  expect(warns[0]?.message).toMatch(/^ERR_JWKS_UNAVAILABLE \(misconfigured\): /);
  expect(warns[0]?.fields).toMatchObject({ event: 'iam-authz.unavailable', code: 'ERR_JWKS_UNAVAILABLE', misconfigured: true });
  expect(lines.filter((l) => l.level === 'debug')).toHaveLength(0);
  // A minute on, the next line says how many were left out.
  clock.advance(60_000);
  await expect(authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
  const after = unavailable(lines);
  expect(after).toHaveLength(4);
  expect(after[3]?.fields).toMatchObject({ suppressed: 5 });
  expect(after[3]?.message).toMatch(/5 more like it/);
});

test('503 after a while: a policy URL answering 404, and ready() against it, are warn lines naming the URL and status', async () => {
  const { authz, lines } = setup({ policyUrl: `${notFound.url}/policy/v1/roles`, policyToken: () => Promise.resolve('service-token') });
  await expect(authz.ready({ applications: ['app-1'] })).rejects.toMatchObject({ code: 'ERR_POLICY_UNAVAILABLE', misconfigured: true });
  const warns = unavailable(lines);
  expect(warns).toHaveLength(1);
  expect(warns[0]?.message).toContain(`${notFound.url}/policy/v1/roles`);
  expect(warns[0]?.message).toContain('404');
  const identity = await authz.authenticate(`Bearer ${token()}`);
  await expect(authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: WVW1 })).rejects.toMatchObject({ code: 'ERR_POLICY_UNAVAILABLE' });
  expect(unavailable(lines)).toHaveLength(2);
});

test('503 after a while: an outage (nothing listening) is a warn line, misconfigured: false', async () => {
  const gone = await startLoopback(() => undefined);
  const url = gone.url;
  await gone.close();
  const { authz, lines } = setup({ jwksUri: `${url}/jwks.json` });
  await expect(authz.authenticate(`Bearer ${token()}`)).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
  const warns = unavailable(lines);
  expect(warns).toHaveLength(1);
  expect(warns[0]?.message).toMatch(/^ERR_JWKS_UNAVAILABLE \(unavailable\): /);
  expect(warns[0]?.fields).toMatchObject({ misconfigured: false });
});

test('503 after a while: an outage while the cached policy is still served is a warn line before any 503', async () => {
  const { authz, lines, clock } = setup({ policy: { ttlMs: 1_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000 } });
  const identity = await authz.authenticate(`Bearer ${token()}`);
  expect((await authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: WVW1 })).granted).toBe(true);
  iam.down = 503;
  clock.advance(2_000);
  // Stale: still served, and the background revalidation fails.
  expect((await authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: WVW1 })).granted).toBe(true);
  await vi.waitFor(() => { expect(lines.some((l) => (l.fields as { event?: unknown }).event === 'iam-authz.upstream-failed')).toBe(true); });
  const failed = lines.filter((l) => (l.fields as { event?: unknown }).event === 'iam-authz.upstream-failed');
  expect(failed[0]?.level).toBe('warn');
  expect(failed[0]?.message).toContain(iam.policyUrl);
  expect(failed[0]?.message).toContain('503');
  expect(unavailable(lines)).toHaveLength(0);
});

test('a grant logs nothing; without a logger nothing is logged', async () => {
  const { authz, lines } = setup();
  const identity = await authz.authenticate(`Bearer ${token()}`);
  expect((await authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: WVW1 })).granted).toBe(true);
  expect(lines).toHaveLength(0);
});
