/**
 * The one mechanism by which a cached request is answered synchronously: a promise fulfilled from
 * the start that carries its value, so a guard reads the value back instead of awaiting it — which
 * spares the request two trips through the microtask queue and their allocations. Whoever answers
 * from a cache (the verified-token cache, the grant memo, a guard's last answer) hands out such a
 * promise, made once and kept with what it caches; an answer computed on the spot is one too. Any
 * other promise has no value to read: await it.
 */

/** Where a settled promise keeps its value. */
const VALUE: unique symbol = Symbol('iam-authz.settled-value');

type Settled<T> = Promise<T> & { [VALUE]?: T };

/**
 * A promise fulfilled with `value` (not a thenable), whose value {@link settledValue} reads back.
 * Not frozen: Node's async hooks may tag a promise made before they were enabled when it is next used.
 */
export function settled<T extends object>(value: T): Promise<T> {
  const promise: Settled<T> = Promise.resolve(value);
  promise[VALUE] = value;
  return promise;
}

/**
 * The value of a promise made by {@link settled} (a guard's answer from a cached token and a
 * remembered grant, `authenticate` of a cached token, `authorize` of a remembered grant, …), or
 * `undefined` for any other promise — then await it.
 */
export function settledValue<T>(promise: Promise<T>): T | undefined {
  return (promise as Settled<T>)[VALUE];
}
