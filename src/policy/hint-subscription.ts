/**
 * The policy client's side of a hint channel (`policy.hints`): subscribed on first use, never at
 * construction (no I/O there); every hint received is checked field by field and handed on only
 * when it is of this issuer; a new `changeId` is published once. A channel that throws or rejects
 * never fails a request: the TTL then bounds staleness alone.
 */
import type { HintChannel, PolicyHint } from './hints.js';

/** Longest field of a hint accepted (`issuer`, `application`, `changeId`). */
const MAX_HINT_FIELD = 1024;

export class HintSubscription {
  readonly #channel: HintChannel | undefined;
  readonly #issuer: string | undefined;
  readonly #onHint: (application: string, changeId: string) => void;
  /** Not yet subscribed, subscribed (with its unsubscribe), broken (subscribing threw) or closed. */
  #state: 'idle' | 'broken' | 'closed' | (() => void) = 'idle';

  /** `onHint` gets each valid hint of `issuer`; it must not throw (what it throws is dropped). */
  constructor(channel: HintChannel | undefined, issuer: string | undefined, onHint: (application: string, changeId: string) => void) {
    this.#channel = channel;
    this.#issuer = issuer;
    this.#onHint = onHint;
  }

  /** Subscribes once, on the first use of the policy client. */
  ensure(): void {
    if (this.#state !== 'idle') return;
    const channel = this.#channel;
    if (channel === undefined) {
      this.#state = 'broken';
      return;
    }
    try {
      const unsubscribe = channel.subscribe((hint) => { this.#received(hint); });
      this.#state = typeof unsubscribe === 'function' ? unsubscribe : () => {};
    } catch {
      // A channel that cannot subscribe leaves the TTL in charge: never a failed request.
      this.#state = 'broken';
    }
  }

  /**
   * `undefined` without a channel; else whether hints are received now: subscribed (or not yet
   * used) and the channel's `connected` is not `false`. `false` when subscribing threw.
   */
  connected(): boolean | undefined {
    if (this.#channel === undefined) return undefined;
    if (this.#state === 'broken' || this.#state === 'closed') return false;
    try {
      return this.#channel.connected !== false;
    } catch {
      return false;
    }
  }

  /** Tells the fleet of a `changeId` this replica found; a publish failure is dropped. */
  publish(application: string, changeId: string): void {
    const channel = this.#channel;
    const issuer = this.#issuer;
    if (channel === undefined || issuer === undefined || this.#state === 'closed') return;
    const hint: PolicyHint = { issuer, application, changeId };
    Promise.resolve().then(() => channel.publish(hint)).catch(() => { /* best effort: the TTL still bounds staleness */ });
  }

  /** Unsubscribes; later hints are ignored and nothing is published. */
  close(): void {
    const unsubscribe = this.#state;
    this.#state = 'closed';
    if (typeof unsubscribe !== 'function') return;
    try {
      unsubscribe();
    } catch {
      // The channel's own failure: nothing more to release here.
    }
  }

  /** A hint: validated field by field, then handed on. Never throws. */
  #received(hint: unknown): void {
    try {
      if (typeof this.#state !== 'function' || typeof hint !== 'object' || hint === null) return;
      const { issuer, application, changeId } = hint as Record<string, unknown>;
      if (!isHintField(issuer) || !isHintField(application) || !isHintField(changeId)) return;
      if (issuer !== this.#issuer) return;
      this.#onHint(application, changeId);
    } catch {
      // A hint is advice: whatever it is, it must not break the channel's delivery loop.
    }
  }
}

function isHintField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_HINT_FIELD;
}
