/**
 * The decision explorer: answers "why was this request granted or denied?" with the library's own
 * `createAuthorizer` pointed back at this IAM (its JWKS and policy API over loopback), so the answer
 * is exactly what a consuming service would compute — verification, policy fetch and decision.
 *
 * A fresh Authorizer per question (no token cache, no stale policy): the explorer shows the config
 * in force now, not what a long-lived cache held. Its undici Agent is shared and never proxied:
 * loopback requests must not go to an `HTTP_PROXY`.
 */
import { Agent } from 'undici';
import { createAuthorizer, isIamAuthzError, type Decision, type Identity, type ResourceQuery } from 'iam-authz';

export interface ExplainQuery {
  token: string;
  service: string;
  permission: string;
  resource: ResourceQuery;
}

/** What the explorer reports: the decision, or the error the Authorizer raised (401/503 …). */
export type ExplainResult =
  | { outcome: 'decided'; decision: Decision; actor: string; application: string; tenant: string | undefined }
  | { outcome: 'error'; error: { status: number; code: string; message: string } };

export interface AccessibleQuery {
  token: string;
  service: string;
  permission: string;
  /** A custom reference type such as `VIN`; omitted: the token's node ids. */
  type?: string;
}

export type AccessibleResult =
  | { outcome: 'listed'; resources: { reference: string; grantedBy: Decision['grantedBy']; roles: readonly string[] }[]; checked: number }
  | { outcome: 'error'; error: { status: number; code: string; message: string } };

export class Explainer {
  readonly #baseUrl: string;
  /** Made on first use. Bun's `undici` is a shim whose `Agent` has no `close()`. */
  #agent: Agent | undefined;
  readonly #now: (() => number) | undefined;

  /** `now`: the IAM's clock, so that tokens it minted are judged by the same time. Default `Date.now`. */
  constructor(baseUrl: string, now?: () => number) {
    this.#baseUrl = baseUrl;
    this.#now = now;
  }

  async explain(query: ExplainQuery): Promise<ExplainResult> {
    return this.#withIdentity(query.token, async (authorizer, identity) => {
      const decision = await authorizer.authorize(identity, query);
      return { outcome: 'decided', decision, actor: identity.claims.sub, application: identity.claims.app, tenant: identity.claims.tid };
    });
  }

  /**
   * The resources of one type (or the node ids) the token may act on, from the library's own
   * `accessible` — the token's `ars` and the policy, no per-resource call — with the roles that
   * grant each; `checked` counts the references of that kind the token names.
   */
  async accessible(query: AccessibleQuery): Promise<AccessibleResult> {
    return this.#withIdentity(query.token, async (authorizer, identity) => {
      const { type, service, permission } = query;
      const kind = type === undefined ? { node: true } : { type };
      const found = await authorizer.accessible(identity, { service, permission, ...kind, explain: true });
      const candidates = new Set(identity.claims.ars.flatMap((ref) => (type === undefined ? ref.n : ref.c.filter((c) => c.startsWith(`${type}=`)))));
      const resources = found.map(({ value, roles }) => ({
        reference: type === undefined ? value : `${type}=${value}`,
        grantedBy: { role: roles[0] as string, service, permission },
        roles,
      }));
      return { outcome: 'listed', resources, checked: candidates.size };
    });
  }

  async close(): Promise<void> {
    const agent = this.#agent as Partial<Agent> | undefined;
    this.#agent = undefined;
    if (typeof agent?.close === 'function') await agent.close();
  }

  async #withIdentity<T>(token: string, run: (authorizer: ReturnType<typeof createAuthorizer>, identity: Identity) => Promise<T>): Promise<T | { outcome: 'error'; error: { status: number; code: string; message: string } }> {
    const authorizer = createAuthorizer({ baseUrl: this.#baseUrl, dispatcher: this.#agent ??= new Agent({ connections: 4 }), tokenCache: false, ...(this.#now ? { now: this.#now } : {}) });
    try {
      const identity = await authorizer.authenticate(`Bearer ${token}`);
      return await run(authorizer, identity);
    } catch (error) {
      if (isIamAuthzError(error)) return { outcome: 'error', error: { status: error.status, code: error.code, message: error.message } };
      throw error;
    } finally {
      await authorizer.close();
    }
  }
}
