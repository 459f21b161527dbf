/**
 * A hand-driven clock for the `now` option. Key-free: importing it generates no signing key
 * (unlike fixtures.ts, whose `NOW_MS` is the same instant).
 */

/** The tests' "now": tokens are issued at this instant. */
export const TEST_NOW_MS = Date.UTC(2026, 10, 21, 12, 0, 0);

/** A clock that only moves when told to; starts at {@link TEST_NOW_MS} unless told otherwise. */
export class Clock {
  ms: number;
  constructor(ms = TEST_NOW_MS) {
    this.ms = ms;
  }
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
