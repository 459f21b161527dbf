/**
 * The framework-neutral permission guard every adapter wraps: a resolver's value, promise or
 * thenable is used alike (a plain value without a promise tick), a rejecting one passes its error
 * on untouched, and the one-resource, one-permission route gives the same state as the general path.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { useIam } from '../helpers/index.js';

type Req = { vin: unknown };
const iam = useIam();
let authz: Authorizer;
let bearer: string;

beforeAll(() => {
  authz = iam.authorizer();
  bearer = iam.bearer(); // alice: DRIVER on VIN=WVW1 (READ)
});

/** Not a Promise: only a `then` that calls back (as some query builders and old promise libraries do). */
const thenable = (value: unknown): { then: (onFulfilled: (v: unknown) => void) => void } => ({ then: (onFulfilled) => { onFulfilled(value); } });

describe('the permission guard', () => {
  test.each([
    ['a value', (): unknown => 'WVW1'],
    ['a promise', (): unknown => Promise.resolve('WVW1')],
    ['a thenable that is no Promise', (): unknown => thenable('WVW1')],
  ])('a resolver returning %s is granted alike', async (_name, value) => {
    const guard = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.vin as string);
    const state = await guard(bearer, { vin: value() });
    expect(state).toStrictEqual({ token: bearer.slice(7), claims: expect.any(Object) as unknown, decision: expect.objectContaining({ granted: true, reference: 'VIN=WVW1' }) as unknown });
  });

  test('a resolver that throws, or rejects, passes its own error on', async () => {
    const boom = new Error('resolver bug');
    const throwing = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', 'VIN', () => { throw boom; });
    await expect(throwing(bearer, { vin: 'WVW1' })).rejects.toBe(boom);
    const rejecting = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', 'VIN', () => Promise.reject(boom));
    await expect(rejecting(bearer, { vin: 'WVW1' })).rejects.toBe(boom);
  });

  test('one resource and one permission: a denial is a 403, or in report mode a shadow state without `decisions`', async () => {
    const enforce = createGuards<Req>(authz).requirePermission('vehicle-service', 'WRITE', 'VIN', (req) => req.vin as string);
    await expect(enforce(bearer, { vin: 'WVW1' })).rejects.toMatchObject({ status: 403, code: 'ERR_PERMISSION_DENIED' });
    const report = createGuards<Req>(authz, { mode: 'report' }).requirePermission('vehicle-service', 'WRITE', 'VIN', (req) => req.vin as string);
    const state = await report(bearer, { vin: 'WVW1' });
    expect(Object.keys(state ?? {}).sort()).toStrictEqual(['claims', 'decision', 'shadow', 'token']);
    expect(state).toMatchObject({ shadow: true, decision: { granted: false, reason: 'PERMISSION_NOT_GRANTED' } });
  });

  test('a node id, and a one-element list, decide as the single resource they name', async () => {
    const byNode = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', { node: (req) => req.vin as string });
    await expect(byNode(bearer, { vin: 'WVW1' })).rejects.toMatchObject({ status: 403, decision: { reason: 'NO_MATCHING_REFERENCE' } });
    const list = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.vin as readonly string[]);
    const state = await list(bearer, { vin: ['WVW1'] });
    expect(Object.keys(state ?? {}).sort()).toStrictEqual(['claims', 'decision', 'token']);
    expect(state?.decision).toMatchObject({ granted: true, reference: 'VIN=WVW1' });
  });

  test('a resolver returning nothing denies', async () => {
    const guard = createGuards<Req>(authz).requirePermission('vehicle-service', 'READ', 'VIN', () => undefined);
    await expect(guard(bearer, { vin: undefined })).rejects.toMatchObject({ status: 403 });
  });
});
