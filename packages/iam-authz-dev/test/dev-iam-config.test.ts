/** Validation of the development IAM's configuration: every error names the path of the bad field. */
import { describe, expect, test } from 'vitest';
import { startDevIam } from '../src/dev-iam.js';
import { DevIamConfigError, validateConfig, type DevIamConfig } from '../src/config.js';
import { exampleConfig } from './support.js';

const JWKS_URI = 'http://127.0.0.1:9/jwks.json';
const example = (): DevIamConfig => exampleConfig(JWKS_URI);
/** A loosely typed copy, to break on purpose. */
const loose = (): any => JSON.parse(JSON.stringify(example()));

function pathOf(config: unknown): string {
  try {
    validateConfig(config);
  } catch (error) {
    expect(error).toBeInstanceOf(DevIamConfigError);
    const e = error as DevIamConfigError;
    expect(e.name).toBe('DevIamConfigError');
    expect(e.message).toContain(e.path);
    return e.path;
  }
  throw new Error('validateConfig accepted the config');
}

test('the example config is valid and comes back unchanged', () => {
  expect(validateConfig(example())).toStrictEqual(example());
});

test('validateConfig accepts the config as parsed from a JSON file', () => {
  expect(validateConfig(JSON.parse(JSON.stringify(example())))).toStrictEqual(example());
});

describe('permissions of roles', () => {
  test('a role granting a permission its service definition does not list → the permission\'s path', () => {
    const c = loose();
    c.applications[0].roles[0].permissions['vehicle-service'] = ['READ', 'DELETE'];
    expect(pathOf(c)).toBe('applications[0].roles[0].permissions.vehicle-service[1]');
  });

  test('the same for the second role and second application', () => {
    const c = loose();
    c.applications[1].roles[0].permissions['fleet-service'] = ['READ'];
    expect(pathOf(c)).toBe('applications[1].roles[0].permissions.fleet-service[0]');
    const d = loose();
    d.applications[0].roles[1].permissions['vehicle-service'] = ['READ', 'WRITE', 'write'];
    expect(pathOf(d)).toBe('applications[0].roles[1].permissions.vehicle-service[2]');
  });

  test('a role granting on a service that is not a service definition of its application', () => {
    const c = loose();
    c.applications[0].roles[1].permissions['fleet-service'] = ['LIST'];
    expect(pathOf(c)).toBe('applications[0].roles[1].permissions.fleet-service');
  });

  test('a role whose permissions are not an object / not a list', () => {
    const c = loose();
    c.applications[0].roles[0].permissions = ['READ'];
    expect(pathOf(c)).toBe('applications[0].roles[0].permissions');
    const d = loose();
    d.applications[0].roles[0].permissions['vehicle-service'] = 'READ';
    expect(pathOf(d)).toBe('applications[0].roles[0].permissions.vehicle-service');
  });

  test('an empty permission key of a service definition', () => {
    const c = loose();
    c.applications[0].serviceDefinitions[0].permissions = ['READ', ''];
    expect(pathOf(c)).toBe('applications[0].serviceDefinitions[0].permissions[1]');
  });
});

describe('duplicate keys', () => {
  test.each([
    ['IdP key', (c: any) => { c.idps[2].key = 'corp'; }, 'idps[2].key'],
    ['application id', (c: any) => { c.applications[1].id = 'app-1'; }, 'applications[1].id'],
    ['service definition key', (c: any) => { c.applications[0].serviceDefinitions.push({ key: 'vehicle-service', permissions: [] }); }, 'applications[0].serviceDefinitions[1].key'],
    ['role key', (c: any) => { c.applications[0].roles[1].key = 'DRIVER'; }, 'applications[0].roles[1].key'],
    ['actor id', (c: any) => { c.actors[3].id = 'actor-alice'; }, 'actors[3].id'],
    ['IdP subject of one IdP', (c: any) => { c.actors[1].subject = 'alice'; }, 'actors[1].subject'],
  ])('a duplicate %s', (_name, breakIt, path) => {
    const c = loose();
    breakIt(c);
    expect(pathOf(c)).toBe(path);
  });

  test('the same IdP subject under two different IdPs is fine', () => {
    // actor-alice (corp) and actor-dev-alice (dev) both have subject "alice".
    expect(() => validateConfig(example())).not.toThrow();
  });
});

describe('actors', () => {
  test.each([
    ['an unknown idp', (c: any) => { c.actors[0].idp = 'nope'; }, 'actors[0].idp'],
    ['an unknown application', (c: any) => { c.actors[2].application = 'app-9'; }, 'actors[2].application'],
    ['no subject', (c: any) => { delete c.actors[0].subject; }, 'actors[0].subject'],
    ['an empty account', (c: any) => { c.actors[0].account = ''; }, 'actors[0].account'],
    ['no id', (c: any) => { delete c.actors[1].id; }, 'actors[1].id'],
    ['tenants that are a list', (c: any) => { c.actors[0].tenants = ['tenant-1']; }, 'actors[0].tenants'],
    ['a tenant whose references are not a list', (c: any) => { c.actors[0].tenants['tenant-1'] = { r: ['DRIVER'] }; }, 'actors[0].tenants.tenant-1'],
    ['an access reference without c or n', (c: any) => { c.actors[0].tenants['tenant-1'][0] = { r: ['DRIVER'] }; }, 'actors[0].tenants.tenant-1[0]'],
    ['an access reference whose r is not a list', (c: any) => { c.actors[1].tenants['tenant-2'][1].r = 'DRIVER'; }, 'actors[1].tenants.tenant-2[1].r'],
    ['a non-string custom reference', (c: any) => { c.actors[0].tenants['tenant-1'][0].c = ['VIN=WVW1', 7]; }, 'actors[0].tenants.tenant-1[0].c[1]'],
  ])('an actor with %s', (_name, breakIt, path) => {
    const c = loose();
    breakIt(c);
    expect(pathOf(c)).toBe(path);
  });
});

describe('IdPs', () => {
  test.each([
    ['no issuer', (c: any) => { delete c.idps[0].issuer; }, 'idps[0].issuer'],
    ['neither jwksUri nor jwks', (c: any) => { delete c.idps[0].jwksUri; }, 'idps[0]'],
    ['a jwksUri that is not http(s)', (c: any) => { c.idps[0].jwksUri = 'file:///etc/jwks.json'; }, 'idps[0].jwksUri'],
    ['a jwksUri that is not a URL', (c: any) => { c.idps[0].jwksUri = 'http://'; }, 'idps[0].jwksUri'],
    ['a jwks without a keys list', (c: any) => { c.idps[1].jwks = { keys: {} }; }, 'idps[1].jwks.keys'],
    ['a jwks key that is not an object', (c: any) => { c.idps[1].jwks.keys.push('key'); }, 'idps[1].jwks.keys[1]'],
    ['a numeric audience', (c: any) => { c.idps[2].audience = 42; }, 'idps[2].audience'],
    ['an empty audience list', (c: any) => { c.idps[2].audience = []; }, 'idps[2].audience'],
    ['builtin: false', (c: any) => { c.idps[3].builtin = false; }, 'idps[3].builtin'],
    ['no key', (c: any) => { delete c.idps[3].key; }, 'idps[3].key'],
  ])('an IdP with %s', (_name, breakIt, path) => {
    const c = loose();
    breakIt(c);
    expect(pathOf(c)).toBe(path);
  });
});

describe('the top level', () => {
  test.each([
    ['null', null, '$'],
    ['an array', [], '$'],
    ['without idps', { applications: [], actors: [] }, 'idps'],
    ['without applications', { idps: [], actors: [] }, 'applications'],
    ['with actors that are not a list', { idps: [], applications: [], actors: {} }, 'actors'],
  ])('a config that is %s', (_name, config, path) => {
    expect(pathOf(config)).toBe(path);
  });
});

test('startDevIam rejects an invalid config with the DevIamConfigError', async () => {
  const c = loose();
  c.actors[0].idp = 'nope';
  await expect(startDevIam({ config: c })).rejects.toMatchObject({ name: 'DevIamConfigError', path: 'actors[0].idp' });
});
