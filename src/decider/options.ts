/**
 * The decider's options — where the policy is, how it is cached, the default mode, the decision
 * log — with their documentation, defaults and validation, owned here beside the decider.
 */
import type { DecisionEvent } from './decision-log.js';
import { isArray } from '../lib/is-array.js';
import { authorizerChecks as checks } from '../lib/option-checks.js';
import { resolvePolicyOptions, type PolicyOptions, type ResolvedPolicyOptions } from '../policy/options.js';
import type { SharedConfig } from '../shared-options.js';


/** The options of `createAuthorizer` that say where the policy is and how decisions are made and logged. */
export interface DeciderOptions {
  /**
   * The policy API (spec §4.2): a URL, or with several issuers a map from issuer to URL. Policies
   * are cached per issuer and application, and a token's policy is fetched only from its own
   * issuer's URL. Default, per issuer: `${baseUrl}/policy/v1/roles` for the issuer of `baseUrl`
   * (and for a single issuer), else `${base}/policy/v1/roles` for an issuer `${base}/authentication/v1`;
   * an issuer of another shape has no policy API unless the map names it (its decisions are a 503).
   */
  policyUrl?: string | Readonly<Record<string, string>>;
  /** Returns a token to authenticate policy requests as this service. Default: the caller's own verified token. */
  policyToken?: () => Promise<string>;
  /** Role-policy cache settings; see {@link PolicyOptions}. */
  policy?: PolicyOptions;
  /**
   * Default mode of every route guard made with this authorizer: `'enforce'` (a denial is a 403) or
   * `'report'` (a denial is logged with `shadow: true` and the request proceeds; a missing, invalid
   * or expired token is still a 401 and an outage still a 503). Adapters and routes may set their
   * own. `authorize` itself never enforces. Default `'enforce'`.
   */
  mode?: 'enforce' | 'report';
  /**
   * Called with a `DecisionEvent` for every grant (sampled) and denial. May be `async`; its result is
   * not awaited. If it throws or rejects, the request is answered as if it did not exist, and one
   * process warning (`IAM_AUTHZ_ON_DECISION_THREW`) says so, however often it fails. Default: none.
   */
  onDecision?: (event: DecisionEvent) => void | Promise<void>;
  /** Share of grants logged to `onDecision` and `iam-authz:decision`, from 0 to 1; denials are always logged. Default `1`. */
  decisionSampleRate?: number;
}

/** The names of {@link DeciderOptions}. */
export const DECIDER_OPTIONS: readonly (keyof DeciderOptions)[] = ['policyUrl', 'policyToken', 'policy', 'mode', 'onDecision', 'decisionSampleRate'];

/** {@link DeciderOptions}, checked and with their defaults. */
export interface DeciderConfig {
  /** issuer → its policy API; an issuer without one has no entry. */
  readonly policyUrls: ReadonlyMap<string, string>;
  readonly policyToken: (() => Promise<string>) | undefined;
  readonly policy: ResolvedPolicyOptions;
  readonly mode: 'enforce' | 'report';
  readonly onDecision: ((event: DecisionEvent) => void | Promise<void>) | undefined;
  readonly decisionSampleRate: number;
}

export function resolveDeciderOptions(options: DeciderOptions, shared: SharedConfig): DeciderConfig {
  const policyUrls = resolvePolicyUrls(shared.issuers, shared.baseUrl, options.policyUrl);
  if (options.policyToken !== undefined && typeof options.policyToken !== 'function') {
    checks.fail('"policyToken" must be a function returning a Promise of a token');
  }
  if (options.policy !== undefined && (typeof options.policy !== 'object' || isArray(options.policy))) checks.fail('"policy" must be an object');
  const policy = resolvePolicyOptions(options.policy, checks);
  const mode: unknown = options.mode ?? 'enforce';
  if (mode !== 'enforce' && mode !== 'report') checks.fail('"mode" must be \'enforce\' or \'report\'');
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function') checks.fail('"onDecision" must be a function');
  const decisionSampleRate = options.decisionSampleRate ?? 1;
  if (typeof decisionSampleRate !== 'number' || !(decisionSampleRate >= 0 && decisionSampleRate <= 1)) {
    checks.fail('"decisionSampleRate" must be a number from 0 to 1');
  }
  return { policyUrls, policyToken: options.policyToken, policy, mode, onDecision: options.onDecision, decisionSampleRate };
}

const ISSUER_PATH = '/authentication/v1';

/**
 * issuer → its policy API. A string serves a single issuer; a map names issuers. The default is
 * derived from `baseUrl` for its own issuer (and for a lone issuer, as before), else from an issuer
 * of the IAM's shape (`${base}/authentication/v1` → `${base}/policy/v1/roles`): never another
 * issuer's URL, so that a policy from one IAM cannot decide the token of another.
 */
function resolvePolicyUrls(issuers: readonly string[], baseUrl: string | undefined, option: unknown): Map<string, string> {
  return checks.perIssuerUrls('policyUrl', issuers, option, (issuer) => {
    if (baseUrl !== undefined && (issuers.length === 1 || issuer === `${baseUrl}${ISSUER_PATH}`)) return `${baseUrl}/policy/v1/roles`;
    if (issuer.endsWith(ISSUER_PATH) && isHttpUrl(issuer)) return `${issuer.slice(0, -ISSUER_PATH.length)}/policy/v1/roles`;
    return undefined;
  });
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol, username, password } = new URL(value);
    return (protocol === 'https:' || protocol === 'http:') && !username && !password;
  } catch {
    return false;
  }
}
