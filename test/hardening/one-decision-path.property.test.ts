/**
 * One decision path: every entry point (`authorize`, `authorizeMany`, `accessible`,
 * `permissionsFor`, the guards — and so the CLI's explain and the console's explorer, which call
 * them) answers with the same policy rules. Under a policy that changes on the IAM — a role granted
 * a moment ago (no clock move: a denial refetches), or any change after the cached copy expired —
 * each of them, asked first or last, agrees with the policy the IAM now serves.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { createGuards } from '../../src/adapter/index.js';
import { PermissionDeniedError, type Authorizer, type Identity } from '../../src/index.js';
import type { RolePolicy } from '../../src/types.js';
import { Clock, useIam, VEHICLE } from '../helpers/index.js';

const PERMISSIONS = ['READ', 'WRITE'] as const;
const ROLES = ['DRIVER', 'OWNER'] as const;
const VALUES = ['A', 'B', 'C', 'D'] as const;
/** DRIVER on A and B, OWNER on C and B; no role on D. */
const ARS = [{ r: ['DRIVER'], c: ['VIN=A', 'VIN=B'] }, { r: ['OWNER'], c: ['VIN=C', 'VIN=B'] }];
const TTL_MS = 60_000;

type Grants = Record<(typeof ROLES)[number], readonly string[]>;

const iam = useIam();
let change = 0;

function policyOf(grants: Grants): RolePolicy {
  change += 1;
  return {
    applicationId: 'app-1',
    changeId: `p${change}`,
    roles: ROLES.map((key) => ({ key, servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: grants[key].map((p) => ({ key: p })) }] })),
  };
}

/** What the IAM's current policy says. */
function expected(grants: Grants, permission: string, value: string): boolean {
  return ARS.some((ar) => ar.c.includes(`VIN=${value}`) && ar.r.some((role) => grants[role as keyof Grants].includes(permission)));
}

type Entry = 'authorize' | 'authorizeMany' | 'accessible' | 'permissionsFor' | 'guard';
const ENTRIES: readonly Entry[] = ['authorize', 'authorizeMany', 'accessible', 'permissionsFor', 'guard'];

async function ask(authz: Authorizer, identity: Identity, entry: Entry, permission: string, value: string): Promise<boolean> {
  const resource = { type: 'VIN', value };
  switch (entry) {
    case 'authorize': return (await authz.authorize(identity, { service: VEHICLE, permission, resource })).granted;
    case 'authorizeMany': return ((await authz.authorizeMany(identity, [{ service: VEHICLE, permission, resource }, { service: VEHICLE, permission, resource: { type: 'VIN', value: 'D' } }]))[0] as { granted: boolean }).granted;
    case 'accessible': return (await authz.accessible(identity, { service: VEHICLE, permission, type: 'VIN' })).includes(value);
    case 'permissionsFor': return (await authz.permissionsFor(identity, { service: VEHICLE, resource })).some((p) => p.permission === permission);
    case 'guard': {
      const guard = createGuards(authz).requirePermission(VEHICLE, permission, 'VIN', () => value);
      return guard(`Bearer ${identity.token}`, {}).then(() => true, (error: unknown) => {
        if (error instanceof PermissionDeniedError) return false;
        throw error;
      });
    }
  }
}

const grantsArb: fc.Arbitrary<Grants> = fc.record({
  DRIVER: fc.subarray([...PERMISSIONS]),
  OWNER: fc.subarray([...PERMISSIONS]),
});
const stepArb = fc.record({
  // 'grant': roles only gain permissions, the clock stands (a denial must refetch);
  // 'expire': any policy, asked after the cached copy expired.
  kind: fc.constantFrom('grant' as const, 'expire' as const),
  grants: grantsArb,
  permission: fc.constantFrom(...PERMISSIONS),
  value: fc.constantFrom(...VALUES),
  order: fc.shuffledSubarray([...ENTRIES], { minLength: ENTRIES.length }),
});

test('every entry point agrees with the policy the IAM serves, whichever is asked first', async () => {
  await fc.assert(fc.asyncProperty(grantsArb, fc.array(stepArb, { minLength: 1, maxLength: 4 }), async (initial, steps) => {
    const clock = new Clock();
    let grants = initial;
    iam.policy = policyOf(grants);
    const authz = iam.authorizer({
      now: clock.now, tokenCache: false,
      policy: { ttlMs: TTL_MS, maxStaleMs: 0, minRefreshIntervalMs: 0 },
    });
    try {
      const identity = await authz.authenticate(iam.bearer({ ars: ARS }));
      // Warm the cache with the initial policy.
      await authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'A' } });
      for (const step of steps) {
        if (step.kind === 'grant') {
          grants = { DRIVER: [...new Set([...grants.DRIVER, ...step.grants.DRIVER])], OWNER: [...new Set([...grants.OWNER, ...step.grants.OWNER])] };
        } else {
          grants = step.grants;
          clock.advance(TTL_MS + 1);
        }
        iam.policy = policyOf(grants);
        const want = expected(grants, step.permission, step.value);
        for (const entry of step.order) {
          expect(await ask(authz, identity, entry, step.permission, step.value), `${entry} ${step.permission} on ${step.value}`).toBe(want);
        }
      }
    } finally {
      await authz.close();
    }
  }), { numRuns: 25 });
});
