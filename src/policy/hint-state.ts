/**
 * What the hints said about one application's policy: the rule that a hint can cause a request,
 * never cancel one. A hint naming another `changeId` than the one held leaves the policy due until
 * the API answers a fetch sent after it (or one that brings that `changeId`); no later hint clears
 * it, so a replayed one cannot. A hint naming the `changeId` held only tells a denial that a
 * refetch would confirm it.
 */
export class HintState {
  /** The `changeId` of the last valid hint received. */
  #last: string | undefined;
  /** The `changeId` of a hint not answered yet. */
  #pending: string | undefined;
  /** Counts the hints that set {@link #pending}: a fetch sent before the last of them does not answer it. */
  #serial = 0;

  /** True while a hint waits for an answer of the API: revalidate as soon as the spacing allows. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /** The mark a fetch takes when it starts, for {@link answered}. */
  get serial(): number {
    return this.#serial;
  }

  /** A valid hint of `changeId`, with `held` the `changeId` held: true when it makes the policy due. */
  received(changeId: string, held: string): boolean {
    this.#last = changeId;
    // A hint of the changeId held says nothing new, and never cancels a revalidation already due.
    if (changeId === held) return false;
    this.#pending = changeId;
    this.#serial += 1;
    return true;
  }

  /**
   * The API answered a fetch that started at `serial`, and `changeId` is now held: a pending hint
   * is answered when no hint came after the fetch was sent (the IAM answered after it), or when the
   * answer names the hinted `changeId`. Otherwise it stands: revalidate again.
   */
  answered(serial: number, changeId: string): void {
    if (this.#pending !== undefined && (this.#serial === serial || this.#pending === changeId)) this.#pending = undefined;
  }

  /** True when the last hint named `held` and none is pending: a refetch after a denial would only confirm it. */
  confirms(held: string | undefined): boolean {
    return this.#pending === undefined && this.#last !== undefined && this.#last === held;
  }

  /** True when the last hint already named `changeId` (this replica fetched it because of that hint): no echo. */
  announced(changeId: string): boolean {
    return this.#last === changeId;
  }
}
