/**
 * The decider's policies: one policy client per issuer, built from the decider's options, so that a
 * policy fetched from one IAM never decides another's token — and what is done over all of them:
 * the client of a caller, warming before the first request, their status, closing.
 */
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { PolicyUnavailableError } from '../errors.js';
import { PolicyClient, type PolicyStatus } from '../policy/policy-client.js';
import type { SharedRuntime } from '../shared-options.js';
import type { Caller } from '../types.js';
import type { DeciderConfig } from './options.js';

/** Where each issuer's cached policies stand, and whether the hint channel is connected (`null`: no channel). */
export interface PoliciesStatus {
  applications: Record<string, Record<string, PolicyStatus>>;
  hints: { connected: boolean } | null;
}

export interface Policies {
  /** issuer → its policy client; an issuer without a policy API has none. */
  readonly clients: ReadonlyMap<string, PolicyClient>;
  /** The client of the caller's issuer; a `PolicyUnavailableError` (503) when that issuer has no policy API. */
  readonly clientOf: (identity: Caller) => PolicyClient;
  /**
   * Fetches the policies of `applications` now (default: those of `accepted` when `policyToken` is
   * set), per issuer. Throws a `TypeError` at once when they cannot be fetched without a caller.
   */
  readonly warm: (applications: unknown, accepted: ReadonlySet<string> | undefined) => ReadonlyMap<string, Promise<unknown>>;
  /** Does no I/O. */
  readonly status: () => PoliciesStatus;
  /** Releases every client. */
  readonly close: () => void;
}

/** What the policy clients tell: see `PolicyClientConfig.onDropped`, `onChanged` and `onHinted` (here with the issuer). */
export interface PolicyEvents {
  readonly dropped: (policy: CompiledPolicy, reason: 'replaced' | 'evicted') => void;
  readonly changed?: ((issuer: string, applicationId: string, policy: CompiledPolicy) => void) | undefined;
  readonly hinted?: ((issuer: string, applicationId: string) => void) | undefined;
}

export function createPolicies(config: DeciderConfig, shared: SharedRuntime, events: PolicyEvents): Policies {
  // One policy client per issuer: a policy fetched from one IAM never decides another's token.
  const clients = new Map([...config.policyUrls].map(([issuer, url]) => [issuer, new PolicyClient({
    url,
    dispatcher: shared.dispatcher,
    policyToken: config.policyToken,
    now: shared.now,
    ...config.policy,
    issuer,
    log: shared.log,
    onDropped: events.dropped,
    onChanged: events.changed && ((app, policy) => { events.changed?.(issuer, app, policy); }),
    onHinted: events.hinted && ((app) => { events.hinted?.(issuer, app); }),
  })]));

  function clientOf(identity: Caller): PolicyClient {
    const client = clients.get(identity.claims.iss);
    if (!client) throw new PolicyUnavailableError('no policy API configured for the token\'s issuer: set "baseUrl" or "policyUrl"');
    return client;
  }

  /** Throws at once (not in the promise) so that a misuse starts no fetch of keys either. */
  function warm(requested: unknown, accepted: ReadonlySet<string> | undefined): ReadonlyMap<string, Promise<unknown>> {
    // By default, the accepted applications' policies when they can be fetched without a caller.
    const applications = requested ?? (config.policyToken && accepted ? [...accepted] : []);
    if (!Array.isArray(applications) || !applications.every((a): a is string => typeof a === 'string' && a.length > 0)) {
      throw new TypeError('ready: "applications" must be an array of non-empty application ids');
    }
    if (applications.length > 0 && (clients.size === 0 || !config.policyToken)) {
      throw new TypeError('ready: "applications" needs the "policyToken" option (and a policy API): the policy is otherwise fetched with each caller\'s token');
    }
    const foreign = accepted ? applications.find((a) => !accepted.has(a)) : undefined;
    if (foreign !== undefined) throw new TypeError(`ready: "applications" lists ${JSON.stringify(foreign)}, which the "applications" option does not accept`);
    // With policyToken the caller token is not sent; '' only keys the (unused) refusal memory.
    return new Map([...clients].map(([issuer, client]) => [issuer, Promise.all(applications.map((app) => client.get(app, '')))]));
  }

  return {
    clients,
    clientOf,
    warm,
    status() {
      const applications: Record<string, Record<string, PolicyStatus>> = {};
      for (const [issuer, client] of clients) applications[issuer] = client.status();
      // Connected when every issuer's client receives hints now (a channel without `connected` is).
      const hints = config.policy.hints === undefined ? null : { connected: [...clients.values()].every((client) => client.hintsConnected() !== false) };
      return { applications, hints };
    },
    close() {
      for (const client of clients.values()) client.close();
    },
  };
}
