/**
 * `createAuthorizer` under `NODE_ENV=production` without `audience` accepts every tenant's tokens:
 * one process warning naming `audience`, once per process; never when `audience` is set.
 */
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Authorizers } from '../helpers/index.js';

const authorizers = new Authorizers();
const warnings: Error[] = [];
const onWarning = (w: Error): void => { warnings.push(w); };
beforeEach(() => { warnings.length = 0; process.on('warning', onWarning); });
afterEach(async () => {
  process.off('warning', onWarning);
  vi.unstubAllEnvs();
  await authorizers.closeAll();
});
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const ours = (): Error[] => warnings.filter((w) => (w as { code?: string }).code === 'IAM_AUTHZ_NO_AUDIENCE');

test('production with "audience" set, or without NODE_ENV=production: no warning', async () => {
  vi.stubEnv('NODE_ENV', 'production');
  authorizers.create({ baseUrl: 'https://iam.example.test', audience: 'tenant-1' });
  authorizers.create({ baseUrl: 'https://iam.example.test', audience: ['tenant-1', 'tenant-2'] });
  vi.stubEnv('NODE_ENV', 'development');
  authorizers.create({ baseUrl: 'https://iam.example.test' });
  await settle();
  expect(ours()).toStrictEqual([]);
});

test('production without "audience": one warning naming "audience", however many authorizers', async () => {
  vi.stubEnv('NODE_ENV', 'production');
  authorizers.create({ baseUrl: 'https://iam.example.test' });
  authorizers.create({ baseUrl: 'https://iam.example.test' });
  await settle();
  expect(ours()).toHaveLength(1);
  expect(ours()[0]?.message).toMatch(/"audience"/);
  expect(ours()[0]?.message).toMatch(/every tenant/);
});
