/**
 * Development IAM conformance (issue #9 §8), beside the token-endpoint rules in
 * dev-iam-token.test.ts: unknown config keys are errors naming their path (a typo such as
 * `"permisions"` must not be silently ignored); binding to a non-loopback host warns.
 */
import { describe, expect, test } from 'vitest';
import { DevIamConfigError, startDevIam, validateConfig } from '../src/index.js';
import { isLoopbackHost } from '../src/dev-iam.js';
import { exampleConfig } from './support.js';

describe('unknown config keys', () => {
  test.each([
    ['top level', (c: Record<string, any>) => { c.actor = []; }, 'actor'],
    ['an IdP', (c: Record<string, any>) => { c.idps[0].jwksUrl = 'x'; }, 'idps[0].jwksUrl'],
    ['an application', (c: Record<string, any>) => { c.applications[0].rolez = []; }, 'applications[0].rolez'],
    ['a service definition', (c: Record<string, any>) => { c.applications[0].serviceDefinitions[0].permisions = []; }, 'applications[0].serviceDefinitions[0].permisions'],
    ['a role', (c: Record<string, any>) => { c.applications[0].roles[0].grants = {}; }, 'applications[0].roles[0].grants'],
    ['an actor', (c: Record<string, any>) => { c.actors[0].tenant = {}; }, 'actors[0].tenant'],
    ['an access reference', (c: Record<string, any>) => { Object.values(c.actors[0].tenants as Record<string, any[]>)[0]![0].roles = []; }, 'actors[0].tenants.tenant-1[0].roles'],
  ])('in %s: a DevIamConfigError naming the path', async (_where, mutate, path) => {
    const config = structuredClone(exampleConfig('http://127.0.0.1:9/jwks')) as Record<string, any>;
    mutate(config);
    let error: unknown;
    try {
      validateConfig(config);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DevIamConfigError);
    expect((error as DevIamConfigError).path).toBe(path);
    expect((error as Error).message).toMatch(/unknown key/);
  });

  test('top-level $-annotations ($schema, $comment) are allowed', async () => {
    expect(() => validateConfig({ $schema: 'x', $comment: 'notes', ...(structuredClone(exampleConfig('http://127.0.0.1:9/jwks')) as object) })).not.toThrow();
  });
});

describe('listening', () => {
  test.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  test.each(['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', '128.0.0.1'])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });

  test('a non-loopback host prints a warning before listening (an unassignable TEST-NET address, so nothing is exposed)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => { warnings.push(w); };
    process.on('warning', onWarning);
    try {
      await expect(startDevIam({ config: exampleConfig('http://127.0.0.1:9/jwks'), host: '192.0.2.1', console: false })).rejects.toThrow();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => (w as { code?: string }).code)).toContain('IAM_AUTHZ_DEV_IAM_NOT_LOOPBACK');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
