/**
 * The revocation list kept in step with the fleet over the hint channel (`policy.hints`): the
 * revocations this replica makes are published, those of the others received, and those made before
 * it started read once (`HintChannel.revocationsInForce`, which `ready()` waits for). Started on
 * first use, never at construction (no I/O there). Whatever the channel sends can only be added.
 */
import type { HintChannel, RevocationHint } from '../policy/hints.js';
import type { Revocations } from './revocations.js';

/** Whether the revocations in force were read from the channel. */
export type RevocationLoad = 'loaded' | 'unavailable' | 'none';

export class RevocationSync {
  readonly #channel: HintChannel | undefined;
  readonly #list: Revocations;
  readonly #onRevoked: (revocation: RevocationHint) => void;
  #started = false;
  #closed = false;
  #unsubscribe: (() => void) | undefined;
  #load: Promise<RevocationLoad> | undefined;
  #loaded: RevocationLoad = 'none';

  /** `onRevoked` is told of every revocation that took effect here, received or made. */
  constructor(channel: HintChannel | undefined, list: Revocations, onRevoked: (revocation: RevocationHint) => void) {
    this.#channel = channel;
    this.#list = list;
    this.#onRevoked = onRevoked;
  }

  /** Whether the revocations in force were read: `'none'` without a channel that keeps them. */
  get loaded(): RevocationLoad {
    return this.#loaded;
  }

  /** Subscribes and starts reading the revocations in force, once. Cheap after the first call. */
  ensure(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    const channel = this.#channel;
    if (channel === undefined) return;
    try {
      this.#unsubscribe = channel.subscribe((hint) => { this.#received(hint, true); });
    } catch {
      // A channel that cannot subscribe: revocations made here still hold here.
    }
    this.#read();
  }

  /** Waits until the revocations in force were read (or could not be: `'unavailable'`, tried again next time). */
  async ready(): Promise<RevocationLoad> {
    this.ensure();
    if (this.#loaded === 'unavailable') this.#read();
    return this.#load ?? this.#loaded;
  }

  /** A revocation made here: in force here at once, then told to the fleet (never rejects). */
  async revoke(entry: RevocationHint): Promise<void> {
    this.ensure();
    this.#received(entry, false);
    const channel = this.#channel;
    if (channel === undefined || this.#closed) return;
    try {
      await channel.publish(entry);
    } catch {
      // Best effort: the revocation holds on this replica whatever the channel does.
    }
  }

  close(): void {
    this.#closed = true;
    try {
      this.#unsubscribe?.();
    } catch {
      // The channel's own failure: nothing more to release here.
    }
  }

  #read(): void {
    const channel = this.#channel;
    if (typeof channel?.revocationsInForce !== 'function') return;
    this.#load = Promise.resolve()
      .then(() => channel.revocationsInForce?.())
      .then((found) => {
        if (Array.isArray(found)) for (const r of found) this.#received(r, true);
        return (this.#loaded = 'loaded');
      }, () => (this.#loaded = 'unavailable'));
  }

  /** Adds a revocation (checked field by field when it came from the channel), and says so. Never throws. */
  #received(hint: unknown, fromChannel: boolean): void {
    try {
      if (this.#closed || (hint as { type?: unknown } | null)?.type !== 'revocation') return;
      if (this.#list.add(hint, fromChannel)) this.#onRevoked(hint as RevocationHint);
    } catch {
      // Whatever the channel sends, its delivery loop is not broken by it.
    }
  }
}
