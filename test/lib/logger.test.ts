/**
 * The logger wrapper on its own: the rate limit of `warn` on the fake clock, a logger that throws
 * or rejects (the request goes on, one process warning), the environment switches, and the
 * console logger they turn on.
 */
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createLog, debugRequested, WARN_LINES_PER_WINDOW, WARN_WINDOW_MS, type Logger } from '../../src/lib/logger.js';
import { Clock, useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();
const warnings: Error[] = [];
const problems: unknown[] = [];
const onWarning = (w: Error): void => { warnings.push(w); };
const onProblem = (e: unknown): void => { problems.push(e); };
beforeEach(() => {
  warnings.length = 0;
  problems.length = 0;
  process.on('warning', onWarning);
  process.on('unhandledRejection', onProblem);
});
afterEach(() => {
  process.off('warning', onWarning);
  process.off('unhandledRejection', onProblem);
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

function counting(): { logger: Logger; calls: { level: string; fields: Record<string, unknown>; message: string }[] } {
  const calls: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string): void => { calls.push({ level, fields, message }); };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, calls };
}

test('warn is rate-limited per key on the injected clock; debug is not', () => {
  const clock = new Clock();
  const { logger, calls } = counting();
  const log = createLog(logger, clock.now);
  for (let i = 0; i < 10; i++) {
    log.warn('jwks 404', { event: 'e' }, 'jwks 404');
    log.warn('policy 500', { event: 'e' }, 'policy 500');
    log.debug({ event: 'd' }, 'refused');
    clock.advance(1_000);
  }
  expect(calls.filter((c) => c.message === 'jwks 404')).toHaveLength(WARN_LINES_PER_WINDOW);
  expect(calls.filter((c) => c.message === 'policy 500')).toHaveLength(WARN_LINES_PER_WINDOW);
  expect(calls.filter((c) => c.level === 'debug')).toHaveLength(10);
  clock.advance(WARN_WINDOW_MS);
  log.warn('jwks 404', { event: 'e' }, 'jwks 404');
  expect(calls.at(-1)).toMatchObject({ level: 'warn', fields: { suppressed: 7 }, message: 'jwks 404 (7 more like it in the last minute were not logged)' });
  log.warn('jwks 404', { event: 'e' }, 'jwks 404');
  expect(calls.at(-1)).toMatchObject({ message: 'jwks 404' });
});

test('a logger that throws or rejects breaks no request: the answers stand, one process warning', async () => {
  const throwing = { debug: () => { throw new Error('log down'); }, info: () => undefined, warn: () => { throw new Error('log down'); }, error: () => undefined };
  const rejecting = { debug: () => Promise.reject(new Error('log down')), info: () => undefined, warn: () => undefined, error: () => undefined };
  for (const logger of [throwing, rejecting]) {
    const authz = iam.authorizer({ logger });
    await expect(authz.authenticate('Bearer nope')).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    const identity = await authz.authenticate(iam.bearer());
    expect((await authz.authorize(identity, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } })).granted).toBe(false);
    await expect(authz.check(iam.bearer(), { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } })).rejects.toMatchObject({ status: 403 });
  }
  await new Promise((resolve) => setImmediate(resolve));
  expect(problems).toStrictEqual([]);
  expect(warnings.filter((w) => (w as { code?: string }).code === 'IAM_AUTHZ_LOGGER_THREW').length).toBeLessThanOrEqual(1);
});

test('IAM_AUTHZ_DEBUG and DEBUG=iam-authz ask for the console logger; other values do not', () => {
  expect(debugRequested({ IAM_AUTHZ_DEBUG: '1' })).toBe(true);
  expect(debugRequested({ IAM_AUTHZ_DEBUG: 'true' })).toBe(true);
  expect(debugRequested({ IAM_AUTHZ_DEBUG: '0' })).toBe(false);
  expect(debugRequested({ IAM_AUTHZ_DEBUG: '' })).toBe(false);
  expect(debugRequested({ DEBUG: 'iam-authz' })).toBe(true);
  expect(debugRequested({ DEBUG: 'express:*, iam-*' })).toBe(true);
  expect(debugRequested({ DEBUG: '*' })).toBe(true);
  expect(debugRequested({ DEBUG: '*,-iam-authz' })).toBe(false);
  expect(debugRequested({ DEBUG: 'express:*' })).toBe(false);
  expect(debugRequested({})).toBe(false);
  expect(debugRequested(undefined)).toBe(false);
});

test('IAM_AUTHZ_DEBUG=1 turns on a console logger without code changes; it writes the reason, never the token', async () => {
  vi.stubEnv('IAM_AUTHZ_DEBUG', '1');
  const written: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => { written.push(args.map(String).join(' ')); });
  const localhost = { baseUrl: iam.url.replace('127.0.0.1', 'localhost'), jwksUri: iam.jwksUri };
  const authz = iam.authorizer(localhost);
  const token = iam.token();
  await expect(authz.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  expect(written).toHaveLength(1);
  expect(written[0]).toMatch(/^iam-authz debug: ERR_TOKEN_INVALID: token issuer ".*127\.0\.0\.1.*" is not the expected ".*localhost.*"/);
  for (const part of token.split('.')) expect(written[0]).not.toContain(part);
  vi.unstubAllEnvs();
  written.length = 0;
  const quiet = iam.authorizer(localhost);
  await expect(quiet.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
  expect(written).toHaveLength(0);
});

test('"logger" must have the four methods; null is not "none"', () => {
  expect(() => iam.authorizer({ baseUrl: 'https://iam.example.test', logger: { debug: () => undefined } as never })).toThrow(/^createAuthorizer: "logger" must be an object with debug, info, warn and error/);
  expect(() => iam.authorizer({ baseUrl: 'https://iam.example.test', logger: null as never })).toThrow(/"logger" must not be null/);
  expect(() => iam.authorizer({ baseUrl: 'https://iam.example.test', logger: console })).not.toThrow();
});
