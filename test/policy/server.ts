/**
 * Key-free pieces of the policy tests (importing only these generates no signing key): a
 * hand-driven clock, unique application ids, and a loopback policy API whose `.policy` and
 * `.fault` really are settable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RolePolicy } from '../../src/types.js';
import { TEST_NOW_MS } from '../helpers/clock.js';
import { json, startLoopback } from '../helpers/loopback.js';
import { examplePolicy, type PolicyFault, type PolicyServer } from '../helpers/policy-server.js';

/** The tests' "now" (as `NOW_MS` of test/helpers/fixtures.ts): tokens are issued at this instant. */
export const START_MS = TEST_NOW_MS;

export const VEHICLE = 'vehicle-service';

/** A clock that only moves when told to; starts at {@link START_MS}. */
export { Clock } from '../helpers/clock.js';

let appCounter = 0;
/** A fresh application id, so that events of one test never match another's. */
export function uniqueApp(prefix = 'app'): string {
  appCounter += 1;
  return `${prefix}-${process.pid}-${appCounter}`;
}

/** The spec's example policy, with DRIVER also granted WRITE: a role granted in the console. */
export function driverCanWrite(changeId: string, applicationId: string): RolePolicy {
  const base = examplePolicy(changeId, applicationId);
  return {
    ...base,
    roles: base.roles.map((role) => role.key === 'DRIVER'
      ? { key: 'DRIVER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }, { key: 'WRITE' }] }] }
      : role),
  };
}

/**
 * Answers like the policy server does: 304 on a matching `If-None-Match`, else the policy with its
 * ETag. A changeId that cannot be written as an ETag (Node refuses such a header) gets none.
 */
export function servePolicy(req: IncomingMessage, res: ServerResponse, policy: RolePolicy): void {
  if (!/^[\x21\x23-\x7e]+$/.test(policy.changeId)) {
    json(res, 200, policy);
    return;
  }
  const etag = `"${policy.changeId}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { etag });
    res.end();
    return;
  }
  json(res, 200, policy, { etag });
}

/**
 * Like `startPolicyServer` of `test/helpers/policy-server.ts`, but `.policy` and `.fault` really are
 * settable. (That helper builds its object with `Object.assign`, which copies the *values* of its
 * getters: assigning `.policy` or `.fault` there never reaches the request handler.)
 */
export async function startPolicyApi(policy: RolePolicy = examplePolicy()): Promise<PolicyServer> {
  const state = { policy, fault: undefined as PolicyFault | undefined };
  const lb = await startLoopback((req, res) => {
    if (state.fault?.(req, res)) return;
    servePolicy(req, res, state.policy);
  });
  Object.defineProperties(lb, {
    policy: { get: () => state.policy, set: (p: RolePolicy) => { state.policy = p; }, enumerable: true },
    fault: { get: () => state.fault, set: (f: PolicyFault | undefined) => { state.fault = f; }, enumerable: true },
  });
  return lb as PolicyServer;
}
