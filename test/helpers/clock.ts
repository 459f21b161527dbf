/**
 * The tests' "now" and a hand-driven clock for the `now` option. Key-free: importing it generates
 * no signing key.
 */

/** The tests' "now", in milliseconds: tokens are issued at this instant. */
export const NOW_MS = Date.UTC(2026, 10, 21, 12, 0, 0);
/** {@link NOW_MS} in seconds, as JWT claims (`iat`, `exp`, `nbf`) write it. */
export const NOW_SEC = NOW_MS / 1000;

/** A clock that only moves when told to; starts at {@link NOW_MS} unless told otherwise. */
export class Clock {
  #ms: number;
  constructor(ms = NOW_MS) {
    this.#ms = ms;
  }
  /** The current time in milliseconds: pass it as the `now` option. */
  readonly now = (): number => this.#ms;
  /** The current time in whole seconds (for `iat`). */
  get sec(): number {
    return Math.floor(this.#ms / 1000);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(ms: number): void {
    this.#ms = ms;
  }
}
