/**
 * What a denial leaves behind besides the decision: the `debug` line that tells a typo from a real
 * denial and the `decision:denied` diagnostics event; and the denial of a query that names no
 * usable resource.
 */
import { decisionDenied } from '../diagnostics.js';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { describeResource } from '../engine/resource.js';
import { forLog } from '../lib/log-text.js';
import { listForLog, type Log } from '../lib/logger.js';
import type { Caller, Decision } from '../types.js';
import type { AuthorizeQuery } from './queries.js';

/**
 * One `debug` line per denial: enough to tell a typo from a real denial — the token's roles on the
 * reference and the roles of the cached policy that grant the permission (computed only here, with
 * a logger, on the denial path). The message shows the caller's values escaped and cut; the fields
 * keep them as they are.
 */
export function logDenial(log: Log, identity: Caller, query: AuthorizeQuery, decision: Decision, policy: CompiledPolicy | undefined): void {
  const { service, permission } = query;
  let granting: string[] | undefined;
  // The policy that decided, or, when none was asked (no role on the reference), the cached one.
  if (policy && (decision.changeId === undefined || policy.changeId === decision.changeId)) {
    granting = [];
    for (const [role, services] of policy.roles) if (services.get(service)?.has(permission) === true) granting.push(role);
  }
  const { app, sub } = identity.claims;
  const shadow = query.mode === 'report' ? ' (report mode: let through)' : '';
  log.debug(
    { event: 'iam-authz.denied', code: 'ERR_PERMISSION_DENIED', reason: decision.reason, service, permission, reference: decision.reference, roles: decision.roles, grantingRoles: granting, changeId: decision.changeId, app, sub, mode: query.mode },
    `ERR_PERMISSION_DENIED: ${decision.reason}: ${forLog(service)} ${forLog(permission)} on ${forLog(decision.reference)} for ${forLog(sub)} of application ${forLog(app)}${shadow}; `
      + `the token's roles on it: ${listForLog(decision.roles)}; `
      + (granting ? `roles that would grant it: ${listForLog(granting)} (policy ${forLog(policy?.changeId ?? '')})` : 'roles that would grant it: unknown (no fresh policy cached)'),
  );
}

/** The denial (`INVALID_RESOURCE`) of a query that names no usable resource. */
export function invalidResource(query: AuthorizeQuery): Decision {
  return { granted: false, reference: describeResource(query.resource), roles: [], changeId: undefined, reason: 'INVALID_RESOURCE' };
}

/** Publishes the `decision:denied` event when someone listens; returns `decision`. */
export function deniedEvent(identity: Caller, query: AuthorizeQuery, decision: Decision): Decision {
  if (decisionDenied.hasSubscribers) {
    decisionDenied.publish({
      service: query.service,
      permission: query.permission,
      reference: decision.reference,
      reason: decision.reason,
      roles: decision.roles,
      changeId: decision.changeId,
      sub: identity.claims.sub,
      app: identity.claims.app,
    });
  }
  return decision;
}
