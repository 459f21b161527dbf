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
  if (promise === lastFresh) return lastFreshValue as T;
  return values.get(promise) as T | undefined;
}

/** The promise {@link fresh} made last, and its value. */
let lastFresh: Promise<unknown> | undefined;
let lastFreshValue: unknown;

/**
 * {@link settled} for a value handed out once (a token verified on the spot, a decision not
 * remembered, a guard's answer to such a caller): readable with {@link settledValue} only until the
 * next `fresh` — i.e. by the caller that reads it at once, as a guard does — and kept in no table,
 * which would only grow with values seen once.
 */
export function fresh<T extends object>(value: T): Promise<T> {
  lastFreshValue = value;
  return (lastFresh = Promise.resolve(value));
}
