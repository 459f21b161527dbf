/**
 * Hostile structure (issue #9 §3): a header or payload nested thousands of levels deep — reachable
 * once `maxTokenBytes` is raised — used to end in `RangeError: Maximum call stack size exceeded`
 * from the recursive freeze. Now anything deeper than MAX_JSON_DEPTH is 401 ERR_TOKEN_INVALID,
 * decided before any key lookup or RSA work, and a tree at the limit is still accepted and frozen.
 */
import { describe, expect, test } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/token/freeze-tree.js';
import { KEY, NOW_SEC } from '../helpers/index.js';
import { baseClaims, expectRefused, iamHeader, signObjects, signRaw, useLoopbackJwks } from './support.js';

const { authorizers, iam } = useLoopbackJwks();
const BIG = { maxTokenBytes: 4 * 1024 * 1024 };

/** `{"x":{"x":…}}` with `levels` objects, the innermost empty. */
function nested(levels: number): string {
  return '{"x":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
}

describe('nesting depth of header and payload', () => {
  test('a payload 100,000 levels deep is 401 ERR_TOKEN_INVALID, not a RangeError', async () => {
    const payload = JSON.stringify(baseClaims()).replace(/}$/, `,"deep":${nested(100_000)}}`);
    const authz = authorizers.static(BIG);
    await expectRefused(authz, signRaw(JSON.stringify(iamHeader()), payload), 'ERR_TOKEN_INVALID');
  });

  test('inside ars too: the same bound, and the normalised copy is frozen', async () => {
    const authz = authorizers.static(BIG);
    const withArs = (levels: number) => JSON.stringify({ ...baseClaims(), ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'], x: 'DEEP' }] }).replace('"DEEP"', nested(levels));
    const deepArs = withArs(100_000);
    expect(deepArs).toContain('"x":{"x":');
    await expectRefused(authz, signRaw(JSON.stringify(iamHeader()), deepArs), 'ERR_TOKEN_INVALID');
    // payload (1) → ars (2) → entry (3) → x (4) …: MAX_JSON_DEPTH - 3 levels of x reach the limit exactly.
    const atLimit = withArs(MAX_JSON_DEPTH - 3);
    await expectRefused(authz, signRaw(JSON.stringify(iamHeader()), withArs(MAX_JSON_DEPTH - 2)), 'ERR_TOKEN_INVALID');
    const identity = await authz.authenticate(`Bearer ${signRaw(JSON.stringify(iamHeader()), atLimit)}`);
    expect(Object.isFrozen(identity.claims.ars[0])).toBe(true);
    expect(identity.claims.ars[0]).toStrictEqual({ r: ['DRIVER'], c: ['VIN=WVW1'], n: [] });
  });

  test('a header 100,000 levels deep (arrays) is 401 ERR_TOKEN_INVALID', async () => {
    const header = JSON.stringify(iamHeader()).replace(/}$/, `,"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    const authz = authorizers.static(BIG);
    await expectRefused(authz, signRaw(header, JSON.stringify(baseClaims())), 'ERR_TOKEN_INVALID');
  });

  test('the depth is decided before the key lookup: an unknown kid with a deep payload fetches no JWKS', async () => {
    const authz = iam.authorizer(BIG);
    const payload = JSON.stringify({ ...baseClaims(), iss: iam.issuer }).replace(/}$/, `,"deep":${nested(MAX_JSON_DEPTH + 1)}}`);
    await expectRefused(authz, signRaw(JSON.stringify(iamHeader(KEY, { kid: 'never-seen' })), payload), 'ERR_TOKEN_INVALID');
    expect(iam.requests).toHaveLength(0);
  });

  test(`exactly ${MAX_JSON_DEPTH} levels (the top-level object included) is accepted and frozen all the way down`, async () => {
    // payload (1) → deep (2) → … : the innermost object is at level MAX_JSON_DEPTH.
    const payload = JSON.stringify(baseClaims()).replace(/}$/, `,"deep":${nested(MAX_JSON_DEPTH - 1)}}`);
    const authz = authorizers.static(BIG);
    const identity = await authz.authenticate(`Bearer ${signRaw(JSON.stringify(iamHeader()), payload)}`);
    let node = (identity.claims as unknown as { deep: { x?: unknown } }).deep as Record<string, unknown>;
    let levels = 2;
    while (node.x !== undefined) {
      expect(Object.isFrozen(node)).toBe(true);
      node = node.x as Record<string, unknown>;
      levels++;
    }
    expect(Object.isFrozen(node)).toBe(true);
    expect(levels).toBe(MAX_JSON_DEPTH);
    const tooDeep = JSON.stringify(baseClaims()).replace(/}$/, `,"deep":${nested(MAX_JSON_DEPTH)}}`);
    await expectRefused(authz, signRaw(JSON.stringify(iamHeader()), tooDeep), 'ERR_TOKEN_INVALID');
  });

  test('wide is not deep: 10,000 sibling custom claims are fine', async () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`c${i}`, [i]]));
    const authz = authorizers.static(BIG);
    const identity = await authz.authenticate(`Bearer ${signObjects(iamHeader(), { ...baseClaims(), ...wide, exp: NOW_SEC + 60 })}`);
    expect(Object.isFrozen((identity.claims as unknown as Record<string, unknown>).c9999)).toBe(true);
  });
});
