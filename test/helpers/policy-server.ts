/** A loopback policy API (spec §4.2) serving the spec's example policy, with fault injection. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RolePolicy } from '../../src/types.js';
import { json, startLoopback, type Loopback } from './loopback.js';

/** The spec's illustration: vehicle-service READ/WRITE; DRIVER: READ; OWNER: READ, WRITE. */
export function examplePolicy(changeId = 'c1', applicationId = 'app-1'): RolePolicy {
  return {
    applicationId,
    changeId,
    roles: [
      { key: 'DRIVER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }] }] },
      { key: 'OWNER', servicePolicies: [{ serviceDefinitionSource: 'APPLICATION', serviceDefinitionKey: 'vehicle-service', permissions: [{ key: 'READ' }, { key: 'WRITE' }] }] },
    ],
  };
}

export type PolicyFault = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface PolicyServer extends Loopback {
  policy: RolePolicy;
  /** When set and it returns true, it has answered the request itself. */
  fault: PolicyFault | undefined;
}

/** Serves `policy` with `ETag: "<changeId>"` and 304 on a matching `If-None-Match`. */
export async function startPolicyServer(policy: RolePolicy = examplePolicy()): Promise<PolicyServer> {
  const state = { policy, fault: undefined as PolicyFault | undefined };
  const lb = await startLoopback((req, res) => {
    if (state.fault?.(req, res)) return;
    const etag = `"${state.policy.changeId}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag });
      res.end();
      return;
    }
    json(res, 200, state.policy, { etag });
  });
  // defineProperties, not Object.assign: the accessors must stay accessors to reach the handler.
  return Object.defineProperties(lb, {
    policy: { get: () => state.policy, set: (p: RolePolicy) => { state.policy = p; }, enumerable: true },
    fault: { get: () => state.fault, set: (f: PolicyFault | undefined) => { state.fault = f; }, enumerable: true },
  }) as PolicyServer;
}
