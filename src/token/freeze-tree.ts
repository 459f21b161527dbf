/**
 * Deep freeze of a tree parsed from JSON, iterative and depth-bounded. A token's header and claims
 * are shared between requests through the token cache, so every level is frozen; a recursive walk
 * would end in `RangeError: Maximum call stack size exceeded` on a structure thousands of levels
 * deep (possible once `maxTokenBytes` is raised), so the walk keeps its own stack and refuses
 * anything deeper than {@link MAX_JSON_DEPTH} — decided before any RSA work.
 */
import { TokenInvalidError } from '../errors.js';

/**
 * Deepest nesting accepted in a token's header or payload, counting the top-level object as 1.
 * The IAM's structures need 4 (`payload.ars[i].r[j]`); 32 leaves room for custom claims.
 */
export const MAX_JSON_DEPTH = 32;

// Reused between calls (the walk is synchronous): no allocation per token. A stack pointer, not
// push/pop and `length = 0` (setting an array's length is a call into the runtime).
const nodes: (object | undefined)[] = [];
const depths: number[] = [];
let top = 0;

/**
 * `root` must be fresh `JSON.parse` output: no node shared between parents (a shared node would be
 * walked once per path) and arrays without holes (they are walked by index).
 *
 * Freezes every object and array below `root`, and `root` too unless `freezeRoot` is false (the
 * verifier still writes the normalised `ars` into the payload). Throws `ERR_TOKEN_INVALID` when the
 * tree is deeper than {@link MAX_JSON_DEPTH}; the tree is then left partly frozen, and dropped.
 */
export function freezeTree(root: object, what: 'header' | 'payload', freezeRoot = true): void {
  top = 0;
  push(root, 0, what);
  try {
    while (top > 0) {
      top--;
      const node = nodes[top] as Record<string, unknown>;
      const depth = depths[top] as number;
      nodes[top] = undefined; // no token's objects kept after the walk
      // JSON.parse output: no node is shared or already frozen, and arrays are dense (an index
      // loop is several times cheaper than for-in over an array's string keys).
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) push(node[i], depth, what);
      } else {
        for (const key in node) push(node[key], depth, what);
      }
      if (node !== root || freezeRoot) Object.freeze(node);
    }
  } finally {
    while (top > 0) nodes[--top] = undefined;
  }
}

/** Queues `child` for freezing when it is an object or array, refusing it past the depth limit. */
function push(child: unknown, parentDepth: number, what: 'header' | 'payload'): void {
  if (typeof child !== 'object' || child === null) return;
  if (parentDepth + 1 > MAX_JSON_DEPTH) throw new TokenInvalidError(`token ${what} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  nodes[top] = child;
  depths[top] = parentDepth + 1;
  top++;
}
