/**
 * A loopback policy API (spec §4.2) with settable `.policy` and `.fault`, the spec's example policy
 * and its variants. Key-free: importing it generates no signing key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ETAGC } from '../../src/policy/policy-client.js';
import type { RolePolicy } from '../../src/types.js';
import { json, startLoopback, type Loopback } from './loopback.js';

export const VEHICLE = 'vehicle-service';

/** The spec's illustration: vehicle-service READ/WRITE; DRIVER: READ; OWNER: READ, WRITE. */
export function examplePolicy(changeId = 'c1', applicationId = 'app-1'): RolePolicy {
  return {
    applicationId,
    changeId,
    roles: [
      { key: 'DRIVER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }] }] },
      { key: 'OWNER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: VEHICLE, permissions: [{ key: 'READ' }, { key: 'WRITE' }] }] },
    ],
  };
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

let appCounter = 0;
/** A fresh application id, so that events of one test never match another's. */
export function uniqueApp(prefix = 'app'): string {
  appCounter += 1;
  return `${prefix}-${process.pid}-${appCounter}`;
}

/**
 * Answers like the policy server does: 304 on a matching `If-None-Match`, else the policy with
 * `ETag: "<changeId>"`. A changeId that the client would not send back as an entity tag (the
 * client's own `ETAGC` test) gets no ETag.
 */
export function servePolicy(req: IncomingMessage, res: ServerResponse, policy: RolePolicy): void {
  if (!ETAGC.test(policy.changeId)) {
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

/** The `app` claim of the bearer token of a request (unverified: the test server trusts it). */
export function appOfRequest(req: IncomingMessage): string {
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  const payload = token.split('.')[1] ?? '';
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { app: string }).app;
}

export type PolicyFault = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface PolicyServer extends Loopback {
  policy: RolePolicy;
  /** When set and it returns true, it has answered the request itself. */
  fault: PolicyFault | undefined;
}

/** Serves `policy` per {@link servePolicy}; assigning `.policy` or `.fault` takes effect at once. */
export async function startPolicyServer(policy: RolePolicy = examplePolicy()): Promise<PolicyServer> {
  const state = { policy, fault: undefined as PolicyFault | undefined };
  const lb = await startLoopback((req, res) => {
    if (state.fault?.(req, res)) return;
    servePolicy(req, res, state.policy);
  });
  // defineProperties, not Object.assign: the accessors must stay accessors to reach the handler.
  return Object.defineProperties(lb, {
    policy: { get: () => state.policy, set: (p: RolePolicy) => { state.policy = p; }, enumerable: true },
    fault: { get: () => state.fault, set: (f: PolicyFault | undefined) => { state.fault = f; }, enumerable: true },
  }) as PolicyServer;
}
