/**
 * The grant memo: recent grants, remembered by caller, question and policy, so that the same
 * question asked again under the same fresh policy is answered with the same frozen decision and
 * settled promise, allocating nothing. Denials are never remembered.
 */
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { settled } from '../lib/settled.js';
import type { PolicyClient } from '../policy/policy-client.js';
import type { Caller, Decision } from '../types.js';
import type { AuthorizeQuery } from './queries.js';

/** One remembered grant; the fields say which question, caller and policy it answers. */
interface GrantSlot {
  /**
   * A fingerprint of the caller granted something at this slot last (it is remembered from its
   * second grant on): a number, not the caller, so that a caller seen once is not kept alive here
   * until its slot is reused (with `tokenCache: false` every request's caller is new). A collision
   * only remembers a grant one request early.
   */
  candidate: number;
  identity: Caller | undefined;
  policy: CompiledPolicy | undefined;
  service: string;
  permission: string;
  /** The resource asked: `node` set for a node id, else `type` and `value`. */
  node: string | undefined;
  type: string;
  value: string;
  decision: Decision;
  promise: Promise<Decision>;
}

/** Slots of the grant memo. */
const GRANT_SLOTS = 256;
const NO_DECISION: Decision = Object.freeze({ granted: false, reference: '', roles: Object.freeze([]), changeId: undefined, reason: 'INVALID_RESOURCE' });
const NO_PROMISE = Promise.resolve(NO_DECISION);

/**
 * A direct-mapped table of recent grants, indexed by a few characters of the caller's token and of
 * the resource asked. A slot answers only the very same `Identity` object (the token cache hands
 * the same one to every request with that token), the same service, permission and resource, and
 * the policy the grant was made with while it is still the fresh one for that caller (so a new
 * policy, a hint, a refusal of the caller's token or the policy growing stale all bypass it). The
 * decision it holds is frozen, being shared by every request it answers.
 */
export class GrantMemo {
  readonly #slots: GrantSlot[] = Array.from({ length: GRANT_SLOTS }, () => ({ candidate: -1, identity: undefined, policy: undefined, service: '', permission: '', node: undefined, type: '', value: '', decision: NO_DECISION, promise: NO_PROMISE }));

  /** The slot answering `query` for `identity` under the fresh policy now, or `undefined`. */
  find(identity: Caller, query: AuthorizeQuery, clients: ReadonlyMap<string, PolicyClient>): GrantSlot | undefined {
    // Before the caller and the query are checked: anything not shaped like them takes the full path.
    if (typeof identity !== 'object' || (identity as unknown) === null) return undefined;
    if (typeof query !== 'object' || (query as unknown) === null) return undefined;
    const { resource } = query;
    const mode: unknown = query.mode;
    if (typeof resource !== 'object' || (resource as unknown) === null) return undefined;
    if (mode !== undefined && mode !== 'enforce' && mode !== 'report') return undefined;
    const byNode = 'node' in resource;
    const asked = byNode ? resource.node : (resource as { value: string }).value;
    if (typeof asked !== 'string') return undefined;
    const slot = this.#slots[slotOf(identity, asked)] as GrantSlot;
    if (slot.identity !== identity || slot.service !== query.service || slot.permission !== query.permission) return undefined;
    if (byNode ? slot.node !== asked : slot.node !== undefined || slot.value !== asked || slot.type !== (resource as { type: string }).type) return undefined;
    const fresh = clients.get(identity.claims.iss)?.peek(identity.claims.app, identity.token);
    return fresh !== undefined && fresh.policy === slot.policy ? slot : undefined;
  }

  /** Whether `identity` was granted something at this question's slot before; notes it if not. */
  seenBefore(identity: Caller, query: AuthorizeQuery): boolean {
    const { resource } = query;
    const slot = this.#slots[slotOf(identity, 'node' in resource ? resource.node : resource.value)] as GrantSlot;
    const print = fingerprintOf(identity);
    if (slot.candidate === print) return true;
    slot.candidate = print;
    return false;
  }

  /** Empties every slot that holds `policy`, so that a policy the cache dropped is not kept alive here. */
  forget(policy: CompiledPolicy): void {
    for (const slot of this.#slots) {
      if (slot.policy !== policy) continue;
      slot.identity = undefined;
      slot.policy = undefined;
      slot.decision = NO_DECISION;
      slot.promise = NO_PROMISE;
    }
  }

  /** Remembers a grant; returns its settled promise (see `settled`), the one every later hit returns. */
  remember(identity: Caller, query: AuthorizeQuery, policy: CompiledPolicy, decision: Decision): Promise<Decision> {
    const { resource } = query;
    const byNode = 'node' in resource;
    const slot = this.#slots[slotOf(identity, byNode ? resource.node : resource.value)] as GrantSlot;
    Object.freeze(decision.roles);
    if (decision.grantedBy) Object.freeze(decision.grantedBy);
    slot.identity = identity;
    slot.policy = policy;
    slot.service = query.service;
    slot.permission = query.permission;
    slot.node = byNode ? resource.node : undefined;
    slot.type = byNode ? '' : resource.type;
    slot.value = byNode ? '' : resource.value;
    slot.decision = Object.freeze(decision);
    return (slot.promise = settled(decision));
  }
}

/**
 * Whether nothing the decision read from `identity` can change any more: what `authenticate`
 * returns is frozen to the leaves; a caller object made by hand may not be, and is never remembered.
 */
export function deeplyFrozen(identity: Caller): boolean {
  const { claims } = identity;
  if (!Object.isFrozen(identity) || !Object.isFrozen(claims) || !Object.isFrozen(claims.ars)) return false;
  for (const entry of claims.ars) {
    if (!Object.isFrozen(entry) || !Object.isFrozen(entry.r) || !Object.isFrozen(entry.c) || !Object.isFrozen(entry.n)) return false;
  }
  return true;
}

/**
 * 30 bits of the caller's token (its length and five characters before the two {@link slotOf}
 * reads, from the signature, which differs between any two tokens): a small integer, stored
 * without keeping anything alive. A caller without a string token fingerprints as 0.
 */
function fingerprintOf(identity: Caller): number {
  const token = (identity as { token?: unknown }).token;
  if (typeof token !== 'string' || token.length < 8) return 0;
  const n = token.length;
  return (n ^ (token.charCodeAt(n - 3) << 5) ^ (token.charCodeAt(n - 4) << 11) ^ (token.charCodeAt(n - 5) << 17) ^ (token.charCodeAt(n - 6) << 23) ^ (token.charCodeAt(n - 7) << 27)) & 0x3fffffff;
}

/** Slot of a question: the last characters of the token (its signature) and of the resource asked. */
function slotOf(identity: Caller, asked: string): number {
  const token = (identity as { token?: unknown }).token;
  const t = typeof token === 'string' ? token : '';
  const n = t.length;
  const m = asked.length;
  const h = (n > 1 ? t.charCodeAt(n - 1) ^ (t.charCodeAt(n - 2) << 4) : 0) ^ (m > 0 ? asked.charCodeAt(m - 1) * 31 + m : 0);
  return h & (GRANT_SLOTS - 1);
}
