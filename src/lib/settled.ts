/**
 * Promises that are fulfilled from the start, whose value can be read back synchronously. The
 * cached paths (`authenticate` of a cached token, `authorize` of a remembered grant) hand out such
 * a promise, the same one to every caller; a guard that gets one reads its value here instead of
 * awaiting it, which spares the request two trips through the microtask queue and their allocations.
 */
const values = new WeakMap<Promise<unknown>, unknown>();

/** A frozen promise fulfilled with `value` (not a thenable), readable with {@link settledValue}. */
export function settled<T extends object>(value: T): Promise<T> {
  const promise = Object.freeze(Promise.resolve(value));
  values.set(promise, value);
  return promise;
}

/** The value of a promise made by {@link settled}, or `undefined` for any other promise. */
export function settledValue<T>(promise: Promise<T>): T | undefined {
  return values.get(promise) as T | undefined;
}
