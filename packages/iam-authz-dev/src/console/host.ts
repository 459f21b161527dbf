/** What the console needs from the development IAM it is mounted on: the seam between the two. */
import type { RolePolicy } from '../policy.js';
import type { DevIamConfig } from '../config.js';

/** What the console needs from the development IAM it is mounted on. */
export interface ConsoleHost {
  /** Where the IAM is reached, e.g. `http://127.0.0.1:4000`: the allowed `Host`, and where the decision explorer's Authorizer calls back. */
  readonly baseUrl: string;
  /** The JSON file the IAM was started with; edits are saved there. `undefined`: edits live in memory only. */
  readonly configFile: string | undefined;
  /** Longest token lifetime the IAM issues, in seconds. */
  readonly maxExpirySec: number;
  /** The configuration in force. */
  getConfig(): DevIamConfig;
  /** Puts a validated configuration in force (applications whose roles changed get a new `changeId`). */
  setConfig(next: DevIamConfig): void;
  /** Signs an IAM token for an actor in one of its tenants. */
  mintToken(options: { actor: string; tenantId: string; expiryInSecs: number }): string;
  /** An application's role policy as the policy API serves it (for its `changeId`). */
  policyOf(applicationId: string): RolePolicy | undefined;
  /** The IAM's clock (ms), for the decision explorer. Default `Date.now`. */
  readonly now?: () => number;
}
