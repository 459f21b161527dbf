/**
 * The revocation list of one authorizer (`authorizer.revoke`): which tokens are refused before
 * their `exp` — one `jti`, or every token of a `sub` issued before a moment. Deny-only: entries
 * are only ever added (a message that would remove one does not exist), each leaves when the
 * tokens it can match have expired, and the list is bounded without ever letting a revoked token in
 * again (past its bound it collapses into "every token issued before now"). The check on the
 * request path is one size test while the list is empty, two map lookups otherwise.
 */
import type { RevocationHint } from '../policy/hints.js';

/**
 * What `authorizer.revoke` takes: a token by its `jti`, or a subject's tokens issued before a moment.
 * @inline
 */
export type Revocation =
  | {
    /** The revoked token's `jti`. */
    readonly jti: string;
  }
  | {
    /** The subject (`sub`) whose tokens are revoked. */
    readonly sub: string;
    /**
     * Tokens with an `iat` earlier than this (seconds since the epoch) are revoked. Default: now,
     * rounded up to the second (a token issued in the same second is revoked too).
     */
    readonly issuedBefore?: number;
  };

/** What the list holds, in the form replicas share (see `RevocationHint`). */
type Entry = RevocationHint;

/** The claims a revocation is matched against. */
export interface RevocableClaims {
  readonly jti?: string | undefined;
  readonly sub: string;
  /** A token without one counts as issued before any moment: fail closed. */
  readonly iat?: number | undefined;
}

/** Longest a revocation received from the channel is kept, whatever it asks (s): a forged one cannot pin memory for longer. */
const MAX_RETAIN_SEC = 30 * 86_400;
/** Longest field accepted (`jti`, `sub`). */
const MAX_FIELD = 1024;
/** How often expired entries are dropped while revocations keep coming (s). */
const PRUNE_EVERY_SEC = 60;

export class Revocations {
  readonly #byJti = new Map<string, number>();
  readonly #bySub = new Map<string, { issuedBefore: number; until: number }>();
  /** Every token issued before this (s) is refused, until `#allUntil`: the list collapsed. */
  #allBefore = 0;
  #allUntil = 0;
  /** When entries whose tokens have expired are next dropped (s): at most once a minute, on `add`. */
  #pruneAt = 0;
  readonly #nowSec: () => number;
  readonly #retainSec: number;
  readonly #maxEntries: number;

  constructor(now: () => number, retainSec: number, maxEntries: number) {
    this.#nowSec = () => Math.floor(now() / 1000);
    this.#retainSec = retainSec;
    this.#maxEntries = maxEntries;
  }

  /** Entries held (a collapsed list counts as one). */
  get size(): number {
    return this.#byJti.size + this.#bySub.size + (this.#allUntil > 0 ? 1 : 0);
  }

  /** Whether the list collapsed into one revocation of every token issued before a moment. */
  get collapsed(): boolean {
    return this.#allUntil >= this.#nowSec();
  }

  /** Whether `claims` are revoked now. The request path: no work while the list is empty. */
  refuses(claims: RevocableClaims): boolean {
    if (this.#byJti.size === 0 && this.#bySub.size === 0 && this.#allUntil === 0) return false;
    const now = this.#nowSec();
    const iat = claims.iat ?? -Infinity;
    if (this.#allUntil >= now && iat < this.#allBefore) return true;
    const jtiUntil = claims.jti === undefined ? undefined : this.#byJti.get(claims.jti);
    if (jtiUntil !== undefined && jtiUntil >= now) return true;
    const sub = this.#bySub.get(claims.sub);
    return sub !== undefined && sub.until >= now && iat < sub.issuedBefore;
  }

  /**
   * The entry `revocation` makes now (validated: a `TypeError` naming what is wrong), kept until
   * `exp` when the revoked token's `exp` is known, else `retainSec` from its moment.
   */
  entryOf(revocation: Revocation, exp?: number): Entry {
    const r = revocation as { jti?: unknown; sub?: unknown; issuedBefore?: unknown };
    if (typeof r !== 'object' || (r as unknown) === null) throw new TypeError('revoke: expects { jti } or { sub, issuedBefore? }');
    for (const key of Object.keys(r)) if (key !== 'jti' && key !== 'sub' && key !== 'issuedBefore') throw new TypeError(`revoke: unknown key "${key}" (it takes { jti } or { sub, issuedBefore? })`);
    const now = this.#nowSec();
    if (r.jti !== undefined) {
      if (r.sub !== undefined || r.issuedBefore !== undefined) throw new TypeError('revoke: give either { jti } or { sub, issuedBefore? }, not both');
      if (!isField(r.jti)) throw new TypeError('revoke: "jti" must be a non-empty string of at most 1024 characters');
      return { type: 'revocation', jti: r.jti, until: exp ?? now + this.#retainSec };
    }
    if (!isField(r.sub)) throw new TypeError('revoke: "sub" must be a non-empty string of at most 1024 characters (or give { jti })');
    const issuedBefore = r.issuedBefore ?? this.#nowCeil();
    if (typeof issuedBefore !== 'number' || !Number.isSafeInteger(issuedBefore) || issuedBefore < 0) throw new TypeError('revoke: "issuedBefore" must be whole seconds since the epoch');
    return { type: 'revocation', sub: r.sub, issuedBefore, until: Math.max(now, issuedBefore) + this.#retainSec };
  }

  /**
   * Adds a revocation (made here, or received: `received` entries are checked field by field and
   * their `until` capped; anything malformed is dropped). Returns whether it was added. Never throws
   * for a received one.
   */
  add(entry: unknown, received = false): boolean {
    const e = received ? checkedEntry(entry, this.#nowSec()) : entry as Entry;
    if (e === undefined) return false;
    const now = this.#nowSec();
    if (e.until < now) return false;
    if (this.size >= this.#maxEntries || now >= this.#pruneAt) this.#prune(now);
    // A revocation already held is widened in place: it needs no room.
    const known = e.jti !== undefined ? this.#byJti.has(e.jti) : this.#bySub.has(e.sub ?? '');
    if (!known && this.size >= this.#maxEntries) this.#collapse(now);
    if (e.jti !== undefined) this.#byJti.set(e.jti, Math.max(e.until, this.#byJti.get(e.jti) ?? 0));
    else if (e.sub !== undefined) {
      const held = this.#bySub.get(e.sub);
      // The wider revocation wins: the later moment, kept the longer.
      this.#bySub.set(e.sub, { issuedBefore: Math.max(e.issuedBefore ?? 0, held?.issuedBefore ?? 0), until: Math.max(e.until, held?.until ?? 0) });
    }
    return true;
  }

  /** Drops the entries whose tokens have all expired. */
  prune(): void {
    this.#prune(this.#nowSec());
  }

  #prune(now: number): void {
    this.#pruneAt = now + PRUNE_EVERY_SEC;
    for (const [jti, until] of this.#byJti) if (until < now) this.#byJti.delete(jti);
    for (const [sub, { until }] of this.#bySub) if (until < now) this.#bySub.delete(sub);
    if (this.#allUntil > 0 && this.#allUntil < now) this.#allUntil = this.#allBefore = 0;
  }

  /** Full: one revocation of every token issued up to now replaces the list (nothing revoked gets in again). */
  #collapse(now: number): void {
    let until = now + this.#retainSec;
    for (const u of this.#byJti.values()) until = Math.max(until, u);
    for (const s of this.#bySub.values()) until = Math.max(until, s.until);
    this.#byJti.clear();
    this.#bySub.clear();
    this.#allBefore = now + 1;
    this.#allUntil = Math.max(this.#allUntil, until);
  }

  #nowCeil(): number {
    return this.#nowSec() + 1;
  }

  clear(): void {
    this.#byJti.clear();
    this.#bySub.clear();
    this.#allBefore = this.#allUntil = 0;
  }
}

function isField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD;
}

/** A received revocation, field by field (only these fields kept), its `until` capped; else `undefined`. */
function checkedEntry(value: unknown, now: number): Entry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, jti, sub, issuedBefore, until } = value as Record<string, unknown>;
  if (type !== 'revocation' || typeof until !== 'number' || !Number.isSafeInteger(until)) return undefined;
  const capped = Math.min(until, now + MAX_RETAIN_SEC);
  if (jti !== undefined && sub === undefined && issuedBefore === undefined && isField(jti)) return { type, jti, until: capped };
  if (jti === undefined && isField(sub) && typeof issuedBefore === 'number' && Number.isSafeInteger(issuedBefore) && issuedBefore >= 0) {
    return { type, sub, issuedBefore: Math.min(issuedBefore, now + MAX_RETAIN_SEC), until: capped };
  }
  return undefined;
}
