/**
 * "This owner was closed", as plain JavaScript. An `AbortController` would do, but workerd ties one
 * to the request that made it and refuses to use it while serving another, and a key set or policy
 * client outlives every request (and may be made at global scope, where none may be made at all).
 */
export class Closer {
  #closed = false;
  readonly #listeners = new Set<() => void>();

  get closed(): boolean {
    return this.#closed;
  }

  /** Calls `listener` on {@link Closer.close}; returns the function that stops listening. */
  onClose(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of [...this.#listeners]) listener();
    this.#listeners.clear();
  }
}
