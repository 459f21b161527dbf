/**
 * Log forging: a caller with a valid token puts line breaks, terminal escapes and bidi controls in
 * a resource value of the URL, in `sub`, in a role, or (refused) in `iss`, `aud` or `app`. No
 * message handed to the logger, no `IAM_AUTHZ_DEBUG` line and no error message carries them raw,
 * so no fake `iam-authz warn:` line can appear; the structured fields keep the raw values.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { Logger, LogFields } from '../../src/lib/logger.js';
import { startApp } from '../adapters/apps.js';
import { useIam, VEHICLE } from '../helpers/index.js';

/** What must never reach a log line raw: C0, DEL, C1, the bidi marks, line separators, embeddings, overrides, isolates. */
// eslint-disable-next-line no-control-regex -- the characters a forged log line is made of
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;
/** Everything a terminal or a log viewer starts a new line at. */
// eslint-disable-next-line no-control-regex -- VT and FF break lines too
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/u;

const FORGED = 'iam-authz warn: FORGED';
/**
 * A resource value with every kind of trick in it; sent percent-encoded in the URL path (100
 * characters encoded: Fastify's default `maxParamLength`).
 */
const VALUE = `WVW1\n${FORGED}\r\u001b[2K\u0085\u2028\u2029\u202e\u2066\u0000\u007f\u009b`;
const SUB = `actor-alice\n${FORGED} sub\r\n${FORGED} crlf\u0085\u2028`;
const ROLE = `GUEST\n${FORGED} role\u001b]0;title\u0007`;

const iam = useIam();
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

interface Call { level: string; fields: LogFields; message: string }

function capturing(): { logger: Logger; calls: Call[] } {
  const calls: Call[] = [];
  const at = (level: string) => (fields: LogFields, message: string): void => { calls.push({ level, fields: { ...fields }, message }); };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, calls };
}

/** A token whose `sub` and roles are hostile, with the roles on the hostile resource value. */
function hostileToken(): string {
  return iam.token({ sub: SUB, ars: [{ r: ['DRIVER', ROLE], c: [`VIN=${VALUE}`] }] });
}

/** GET the route that asks for WRITE on the VIN (DRIVER has only READ): a denial with everything in it. */
async function deniedRequest(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/enforced/${encodeURIComponent(VALUE)}`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

function expectClean(text: string): void {
  expect(FORBIDDEN.exec(text), JSON.stringify(text)).toBeNull();
}

describe.each(['express', 'fastify'] as const)('through a %s guard', (framework) => {
  test('a hostile resource value, sub and role reach the logger escaped; the fields keep them raw', async () => {
    const { logger, calls } = capturing();
    const authz = iam.authorizer({ logger });
    const app = await startApp(framework, authz);
    try {
      expect(await deniedRequest(app.url, hostileToken())).toBe(403);
    } finally {
      await app.close();
    }
    const denial = calls.find((c) => c.fields.event === 'iam-authz.denied');
    expect(denial, JSON.stringify(calls)).toBeDefined();
    for (const call of calls) expectClean(call.message);
    // The message still says what it is about, visibly escaped.
    expect(denial?.message).toContain('actor-alice\\u000a');
    expect(denial?.message).toContain('WVW1\\u000a');
    // Structured fields are the raw values: a JSON logger escapes them itself.
    expect(denial?.fields).toMatchObject({ sub: SUB, reference: `VIN=${VALUE}`, app: 'app-1', service: 'vehicle-service', permission: 'WRITE' });
    expect(denial?.fields.roles).toContain(ROLE);
  });

  test('IAM_AUTHZ_DEBUG=1: no forged "iam-authz warn:" line on stderr, every line is the library\'s own', async () => {
    vi.stubEnv('IAM_AUTHZ_DEBUG', '1');
    const written: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => { written.push(args.map(String).join(' ')); });
    const authz = iam.authorizer();
    const app = await startApp(framework, authz);
    try {
      expect(await deniedRequest(app.url, hostileToken())).toBe(403);
    } finally {
      await app.close();
    }
    expect(written.length).toBeGreaterThan(0);
    const lines = written.join('\n').split(LINE_BREAK);
    expect(lines.filter((line) => line.startsWith('iam-authz warn:')), 'a forged warn line').toStrictEqual([]);
    for (const line of lines) expect(line).toMatch(/^iam-authz debug: /);
    for (const line of written) expectClean(line);
  });
});

describe('refused tokens whose claims are hostile', () => {
  const cases = [
    { claim: 'iss', overrides: (): Record<string, unknown> => ({ iss: `${iam.issuer}\u2028${FORGED} iss\u0085\u202e` }) },
    { claim: 'aud', overrides: (): Record<string, unknown> => ({ aud: `tenant-9\u2028${FORGED} aud\u0085`, tid: `tenant-9\u2028${FORGED} aud\u0085` }) },
    { claim: 'app', overrides: (): Record<string, unknown> => ({ app: `app-9\n${FORGED} app\u2028\u0085\u001b[2K` }) },
  ];
  test.each(cases)('$claim: the error message and the log line are escaped', async ({ overrides }) => {
    const { logger, calls } = capturing();
    const authz = iam.authorizer({ audience: ['tenant-1'], applications: ['app-1'], logger });
    const error = await authz.authenticate(iam.bearer(overrides())).then(() => undefined, (e: unknown) => e as Error & { code: string; detail: string });
    expect(error?.code).toBe('ERR_TOKEN_INVALID');
    // Applications log err.message themselves: it is as safe as the library's own lines.
    expectClean(error?.message ?? '');
    expectClean(error?.detail ?? '');
    expect(calls).toHaveLength(1);
    for (const call of calls) expectClean(call.message);
    expect(calls[0]?.message).toContain('FORGED');
  });
});

test('a permission or service passed on from a request is escaped in the 403\'s message', async () => {
  const authz = iam.authorizer();
  const permission = `WRITE\n${FORGED} permission\u2028`;
  const error = await authz.check(iam.bearer(), { service: `${VEHICLE}\r\u0085`, permission, resource: { type: 'VIN', value: 'WVW1' } }).then(() => undefined, (e: unknown) => e as Error);
  expect(error?.message).toContain('WRITE\\u000a');
  expectClean(error?.message ?? '');
});
