/**
 * A Worker may build its authorizer at module scope (`export default app`), where workerd refuses
 * timers, random values, I/O and even `new AbortController()`. createAuthorizer and the fetch and
 * Hono adapters must do none of them until the first request. (workerd itself checks the same in
 * `.ci/workers`; this runs with the suite.)
 */
import { afterEach, expect, test, vi } from 'vitest';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, randomInt: vi.fn(original.randomInt), randomBytes: vi.fn(original.randomBytes), randomUUID: vi.fn(original.randomUUID) };
});

const { randomBytes, randomInt, randomUUID } = await import('node:crypto');
const { createAuthorizer } = await import('../../../src/index.js');
const { createFetchGuards } = await import('../../../adapters/fetch/index.js');
const { honoAuthz } = await import('../../../adapters/hono/index.js');
const { KEY } = await import('../../helpers/fixtures.js');

afterEach(() => { vi.restoreAllMocks(); });

test('building an authorizer and its guards makes no timer, random value, I/O or AbortController', async () => {
  const forbidden = [
    vi.spyOn(globalThis, 'setTimeout'),
    vi.spyOn(globalThis, 'setInterval'),
    vi.spyOn(globalThis, 'setImmediate'),
    vi.spyOn(globalThis, 'fetch'),
    vi.spyOn(globalThis, 'AbortController'),
    vi.spyOn(globalThis.crypto, 'getRandomValues'),
    vi.spyOn(globalThis.crypto, 'randomUUID'),
    vi.spyOn(globalThis.crypto.subtle, 'importKey'),
    vi.spyOn(Math, 'random'),
  ];
  vi.mocked(randomInt).mockClear();
  vi.mocked(randomBytes).mockClear();
  vi.mocked(randomUUID).mockClear();
  const base = { audience: 'tenant-1', tokenCache: { max: 10 } };
  const authorizers = [
    createAuthorizer({ ...base, baseUrl: 'http://127.0.0.1:9' }),
    createAuthorizer({ ...base, issuer: 'http://127.0.0.1:9/authentication/v1', localJwks: { keys: [KEY.jwk] } }),
  ];
  for (const authorizer of authorizers) {
    createFetchGuards(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', () => 'WVW1');
    honoAuthz(authorizer).requirePermission('vehicle-service', 'READ', 'VIN', () => 'WVW1');
  }
  for (const spy of forbidden) expect(spy, spy.getMockName()).not.toHaveBeenCalled();
  expect(randomInt).not.toHaveBeenCalled();
  expect(randomBytes).not.toHaveBeenCalled();
  expect(randomUUID).not.toHaveBeenCalled();
  vi.restoreAllMocks();
  await Promise.all(authorizers.map((a) => a.close()));
});
