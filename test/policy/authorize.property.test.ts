/**
 * Property test end to end: `authorize()` — with `ars` carried by a real signed token and the
 * policy served as JSON by a real loopback policy API — agrees with the plain transcription of
 * spec §7 over the raw policy. Every run uses its own application id (so its own cache entry).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { RolePolicy } from '../../src/types.js';
import { Clock } from '../helpers/clock.js';
import { appOfRequest, servePolicy, startPolicyServer, uniqueApp, type PolicyServer } from '../helpers/policy-server.js';
import { accessReference, checkDecision, permission, reference, rolePolicy, service, transcription } from '../engine/spec-transcription.js';
import { Authorizers, identityFor } from './harness.js';

let server: PolicyServer;
const authorizers = new Authorizers();
const policies = new Map<string, RolePolicy>();

beforeAll(async () => {
  server = await startPolicyServer();
  server.fault = (req, res) => {
    const policy = policies.get(appOfRequest(req));
    if (!policy) return false;
    servePolicy(req, res, policy);
    return true;
  };
});
afterAll(async () => {
  await authorizers.closeAll();
  await server.close();
});

test('authorize() agrees with the transcription of the 7 steps', async () => {
  const authz = authorizers.forServer(server, new Clock(), { maxApplications: 1000 }, { tokenCache: false });
  let grants = 0;
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(accessReference, { maxLength: 5 }),
      rolePolicy,
      fc.constantFrom<'c' | 'n'>('c', 'n'),
      reference,
      service,
      permission,
      async (ars, raw, field, ref, svc, perm) => {
        // A custom reference is asked as { type, value }: it needs a "=" (the value may hold more).
        fc.pre(field === 'n' || ref.includes('='));
        const app = uniqueApp('prop');
        const policy = { ...raw, applicationId: app };
        policies.set(app, policy);
        const requestsBefore = server.requests.length;
        const id = await identityFor(authz, app, { ars });
        const cut = ref.indexOf('=');
        const resource = field === 'n' ? { node: ref } : { type: ref.slice(0, cut), value: ref.slice(cut + 1) };
        const decision = await authz.authorize(id, { service: svc, permission: perm, resource });
        const expected = transcription(ars, field, ref, svc, perm, policy);
        const noRoles = expected.reason === 'NO_MATCHING_REFERENCE';
        checkDecision(decision, expected, ref, svc, perm, noRoles ? undefined : policy.changeId);
        // The policy API is asked exactly when the token holds roles for the resource.
        expect(server.requests.length - requestsBefore).toBe(noRoles ? 0 : 1);
        runs += 1;
        if (decision.granted) grants += 1;
      },
    ),
    { numRuns: 150 },
  );
  expect(runs).toBeGreaterThan(100);
  expect(grants).toBeGreaterThan(3);
});
