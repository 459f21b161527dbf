/**
 * `null` is not "default": for every option of `startDevIam` it is a TypeError naming the option,
 * and in the config file (as `dev-server` reads it) a DevIamConfigError naming the member's path.
 * Only `undefined` / an absent member means the default.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DevIamConfigError, startDevIam, type StartDevIamOptions } from '../src/index.js';
import { exampleConfig } from './support.js';

const config = () => exampleConfig('http://127.0.0.1:9/jwks');

describe('startDevIam options', () => {
  test.each(['config', 'port', 'host', 'console', 'keyFile', 'now'])('%s: null → a TypeError naming it', async (name) => {
    const options = { config: config(), [name]: null } as unknown as StartDevIamOptions;
    const error = await startDevIam(options).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain(`startDevIam: "${name}"`);
    expect((error as Error).message).toContain('null');
  });

  test.each([
    ['port', -1], ['port', 1.5], ['port', '4000'], ['port', 70_000],
    ['host', ''], ['host', 1], ['console', 'yes'], ['console', 0], ['keyFile', ''], ['keyFile', 1], ['now', 5], ['config', ''], ['config', []],
  ])('%s: %j → a TypeError naming it', async (name, value) => {
    await expect(startDevIam({ config: config(), [name]: value })).rejects.toThrow(new RegExp(`^startDevIam: "${name}" must be`));
  });

  test('undefined means the default', async () => {
    const iam = await startDevIam({ config: config(), port: undefined, host: undefined, console: undefined, keyFile: undefined, now: undefined });
    try {
      expect(iam.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await iam.close();
    }
  });
});

describe('null in the config file', () => {
  test.each([
    ['idps[0].jwksUri', (c: any) => { c.idps[0].jwksUri = null; }],
    ['idps[1].jwks', (c: any) => { c.idps[1].jwks = null; }],
    ['idps[2].audience', (c: any) => { c.idps[2].audience = null; }],
    ['idps[3].builtin', (c: any) => { c.idps[3].builtin = null; }],
    ['idps[0].issuer', (c: any) => { c.idps[0].issuer = null; }],
    ['actors[0].tenants.tenant-1[0].c', (c: any) => { c.actors[0].tenants['tenant-1'][0].c = null; }],
    ['actors[1].tenants.tenant-2[1].n', (c: any) => { c.actors[1].tenants['tenant-2'][1].n = null; }],
    ['actors[0].tenants', (c: any) => { c.actors[0].tenants = null; }],
    ['applications', (c: any) => { c.applications = null; }],
  ])('%s: null → a DevIamConfigError naming the path and the null', async (path, mutate) => {
    const dir = await mkdtemp(join(tmpdir(), 'iam-null-'));
    try {
      const c = structuredClone(config());
      mutate(c);
      const file = join(dir, 'iam.json');
      await writeFile(file, JSON.stringify(c));
      const error = await startDevIam({ config: file, console: false }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DevIamConfigError);
      expect((error as DevIamConfigError).path).toBe(path);
      expect((error as Error).message).toContain(`at ${path}: `);
      expect((error as Error).message).toContain('got null');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
