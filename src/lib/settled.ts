/**
 * Promises that are fulfilled from the start, whose value can be read back synchronously. The
 * cached paths (`authenticate` of a cached token, `authorize` of a remembered grant) hand out such
 * a promise, the same one to every caller; a guard that gets one reads its value here instead of
 * awaiting it, which spares the request two trips through the microtask queue and their allocations.
 */
const values = new WeakMap<Promise<unknown>, unknown>();

/**
 * A promise fulfilled with `value` (not a thenable), readable with {@link settledValue}. Not frozen:
 * Node's async hooks may tag a promise made before they were enabled when it is next used.
 */
export function settled<T extends object>(value: T): Promise<T> {
  const promise = Promise.resolve(value);
  values.set(promise, value);
  return promise;
}

/**
 * The value of a promise that is fulfilled already and known to be (a guard's answer from a cached
 * token and a remembered grant, `authenticate` of a cached token, `authorize` of a remembered
 * grant), or `undefined` for any other promise — then await it. An adapter reads a guard's answer
 * with it to skip a trip through the microtask queue on the cached path.
 */
export function settledValue<T>(promise: Promise<T>): T | undefined {
  return values.get(promise) as T | undefined;
}
