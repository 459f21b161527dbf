/**
 * Things due at whole seconds of an authorizer's clock, behind one timer: a hundred thousand watches
 * cost one timer and a map entry each, and nothing runs while nothing is due. The timer is unref'd
 * (a process is not kept alive for a watch) and cleared as soon as nothing is left.
 */

export class Timeline<T> {
  /** Second → what is due then. */
  readonly #buckets = new Map<number, Set<T>>();
  /**
   * The seconds of the buckets, a min-heap, each second once ({@link #inHeap}); a bucket emptied by
   * `delete` stays here until popped, so the heap holds at most one entry per distinct second.
   */
  readonly #heap: number[] = [];
  readonly #inHeap = new Set<number>();
  readonly #now: () => number;
  readonly #onDue: (item: T) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  constructor(now: () => number, onDue: (item: T) => void) {
    this.#now = now;
    this.#onDue = onDue;
  }

  /** Seconds in the heap (for tests: bounded by the distinct seconds pending, not by adds and deletes). */
  get heapSize(): number {
    return this.#heap.length;
  }

  /** Items waiting. */
  get size(): number {
    let n = 0;
    for (const bucket of this.#buckets.values()) n += bucket.size;
    return n;
  }

  /** `item` becomes due at `atMs` (rounded up to the second); returns the key to {@link delete} it with. */
  add(atMs: number, item: T): number {
    const key = Math.ceil(atMs / 1000);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new Set();
      this.#buckets.set(key, bucket);
      if (!this.#inHeap.has(key)) {
        this.#inHeap.add(key);
        push(this.#heap, key);
      }
    }
    bucket.add(item);
    if (key * 1000 < this.#timerAt) this.#arm();
    return key;
  }

  delete(key: number, item: T): void {
    const bucket = this.#buckets.get(key);
    if (!bucket?.delete(item) || bucket.size > 0) return;
    this.#buckets.delete(key);
    if (this.#buckets.size === 0) this.#disarm();
  }

  /** Forgets everything, and the timer. */
  clear(): void {
    this.#buckets.clear();
    this.#heap.length = 0;
    this.#inHeap.clear();
    this.#disarm();
  }

  #arm(): void {
    while (this.#heap.length > 0 && !this.#buckets.has(this.#heap[0] as number)) this.#inHeap.delete(pop(this.#heap) as number);
    const next = this.#heap[0];
    this.#disarm();
    if (next === undefined) return;
    this.#timerAt = next * 1000;
    this.#timer = setTimeout(() => { this.#fire(); }, Math.max(0, this.#timerAt - this.#now()));
    // A watch does not keep a process alive: it watches a connection, which does.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#now();
    while (this.#heap.length > 0 && (this.#heap[0] as number) * 1000 <= now) {
      const key = pop(this.#heap) as number;
      this.#inHeap.delete(key);
      const bucket = this.#buckets.get(key);
      this.#buckets.delete(key);
      for (const item of bucket ?? []) {
        try {
          this.#onDue(item);
        } catch {
          // One item's failure is its own: the others are still due.
        }
      }
    }
    this.#arm();
  }
}

function push(heap: number[], value: number): void {
  heap.push(value);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as number) <= value) break;
    heap[i] = heap[parent] as number;
    i = parent;
  }
  heap[i] = value;
}

function pop(heap: number[]): number | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && (heap[right] as number) < (heap[left] as number) ? right : left;
    if ((heap[child] as number) >= last) break;
    heap[i] = heap[child] as number;
    i = child;
  }
  heap[i] = last;
  return top;
}
