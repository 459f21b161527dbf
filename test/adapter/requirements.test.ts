/**
 * The kit's requirement guards (what decorator-based adapters use): one guard per recorded
 * requirement, none recorded fails closed, and a requirement shared by several handlers is
 * inventoried at each of them.
 */
import { expect, test } from 'vitest';
import { createAuthorizer, IamAuthzError } from '../../src/index.js';
import { createInternalGuards, createRequirementGuards, parseAuthenticateOptions, parsePermissionArgs, splitGuardOptions, type Requirement } from '../../src/adapter/internal.js';

const BASE = 'http://127.0.0.1:9';

test('one guard per requirement, made once; inventoried at every route it sits', async () => {
  const authorizer = createAuthorizer({ baseUrl: BASE });
  try {
    const requirements = createRequirementGuards<object>(createInternalGuards(authorizer));
    const shared: Requirement<object> = { kind: 'permission', ...parsePermissionArgs<object>('RequirePermission', false, ['vehicle-service', 'READ', 'VIN', () => 'X']) };
    requirements.prepare({ controller: 'Cars', handler: 'get' }, shared);
    requirements.prepare({ controller: 'Cars', handler: 'list' }, shared);
    requirements.prepare({ controller: 'Cars', handler: 'me' }, { kind: 'authenticated' });
    requirements.prepare({ controller: 'Cars', handler: 'none' }, undefined);
    const entry = { service: 'vehicle-service', permission: 'READ', resourceType: 'VIN', mode: 'enforce' };
    expect(authorizer.inventory()).toEqual([
      { ...entry, route: { controller: 'Cars', handler: 'get' } },
      { ...entry, route: { controller: 'Cars', handler: 'list' } },
    ]);
    expect(requirements.guardFor(shared)).toBe(requirements.guardFor(shared));
    expect(authorizer.inventory()).toHaveLength(2);
    // None recorded: a valid token is required (fail closed); optional lets a request without Authorization through.
    const error = await requirements.guardFor(undefined)(undefined, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IamAuthzError);
    expect((error as IamAuthzError).status).toBe(401);
    await expect(requirements.guardFor({ kind: 'authenticated', optional: true })(undefined, {})).resolves.toBeUndefined();
  } finally {
    await authorizer.close();
  }
});

test('splitGuardOptions: the set adapter options, and everything else', () => {
  const { guardOptions, rest } = splitGuardOptions({ baseUrl: BASE, realm: 'api', mode: undefined, retryAfterSec: 2, authorizer: undefined });
  expect(guardOptions).toStrictEqual({ realm: 'api', retryAfterSec: 2 });
  expect(rest).toStrictEqual({ baseUrl: BASE, authorizer: undefined });
});

test('parseAuthenticateOptions names the caller', () => {
  expect(parseAuthenticateOptions('Authenticated', undefined)).toStrictEqual({ optional: false });
  expect(parseAuthenticateOptions('Authenticated', { optional: true })).toStrictEqual({ optional: true });
  expect(() => parseAuthenticateOptions('Authenticated', { optinal: true })).toThrow(/^Authenticated: unknown option "optinal"/);
  expect(() => parseAuthenticateOptions('Authenticated', { optional: null })).toThrow(/Authenticated: "optional" must not be null/);
  expect(() => parseAuthenticateOptions('Authenticated', null)).toThrow(TypeError);
});
