/**
 * The decision log: every grant and denial as one event — for `onDecision` and the
 * `iam-authz:decision` diagnostics channel — built only when someone listens. Grants may be
 * sampled; denials are always logged. Never carries the token.
 */
import { decision as decisionChannel } from '../diagnostics.js';
import { warnOnce } from '../lib/warn-once.js';
import type { Caller, Decision } from '../types.js';

/** One permission check, as logged. */
export interface DecisionEvent {
  /** When it was decided, ms since the epoch (the authorizer's clock). */
  readonly time: number;
  /** The service key asked about. */
  readonly service: string;
  /** The permission key asked about. */
  readonly permission: string;
  /** The resource reference checked (`TYPE=value` or the node id). */
  readonly reference: string;
  /** Whether the permission was granted. */
  readonly granted: boolean;
  /** Why; see `DecisionReason`. */
  readonly reason: Decision['reason'];
  /** The token's roles for the reference. */
  readonly roles: readonly string[];
  /** `changeId` of the policy used, if one was needed. */
  readonly changeId: string | undefined;
  /** The token's `app`. */
  readonly application: string;
  /** The token's tenant (`aud`). */
  readonly tenant: string | undefined;
  /** The actor: the token's `sub`. */
  readonly actor: string;
  /** The token's `jti`. */
  readonly jti: string | undefined;
  /** `true` for a denial in `report` mode: logged, and the request went on. */
  readonly shadow: boolean;
}

/** Publishes one event per decision, or `undefined` when nothing listens (no cost on the hot path). */
export type DecisionLogger = (identity: Caller, query: { service: string; permission: string; mode?: string | undefined }, decision: Decision) => void;

/** A logging hook must not turn a decision into a 500 or crash the process; say so once. */
function hookFailed(error: unknown): void {
  warnOnce('IAM_AUTHZ_ON_DECISION_THREW', `createAuthorizer: onDecision threw or rejected (${error instanceof Error ? error.name : typeof error}); decisions are unaffected and still published on iam-authz:decision`);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

export function createDecisionLog(onDecision: ((event: DecisionEvent) => void | Promise<void>) | undefined, grantSampleRate: number, now: () => number): DecisionLogger {
  return (identity, query, decision) => {
    if (onDecision === undefined && !decisionChannel.hasSubscribers) return;
    if (decision.granted && grantSampleRate < 1 && Math.random() >= grantSampleRate) return;
    const { claims } = identity;
    const event: DecisionEvent = {
      time: now(),
      service: query.service,
      permission: query.permission,
      reference: decision.reference,
      granted: decision.granted,
      reason: decision.reason,
      roles: decision.roles,
      changeId: decision.changeId,
      application: claims.app,
      tenant: claims.aud,
      actor: claims.sub,
      jti: claims.jti,
      shadow: !decision.granted && query.mode === 'report',
    };
    if (decisionChannel.hasSubscribers) decisionChannel.publish(event);
    if (onDecision) {
      try {
        const returned: unknown = onDecision(event);
        // An async hook that rejects must not become an unhandled rejection.
        if (isThenable(returned)) returned.then(undefined, hookFailed);
      } catch (error) {
        hookFailed(error);
      }
    }
  };
}
