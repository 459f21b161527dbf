/**
 * Deep freeze of a tree parsed from JSON, depth-bounded. A token's header and claims are shared
 * between requests through the token cache, so every level is frozen. A structure thousands of
 * levels deep (possible once `maxTokenBytes` is raised) is refused as soon as the walk passes
 * {@link MAX_JSON_DEPTH} — decided before any RSA work — so the walk's own recursion stays shallow
 * and never ends in `RangeError: Maximum call stack size exceeded`.
 */
import { TokenInvalidError } from '../errors.js';

/**
 * Deepest nesting accepted in a token's header or payload, counting the top-level object as 1.
 * The IAM's structures need 4 (`payload.ars[i].r[j]`); 32 leaves room for custom claims.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * `root` must be fresh `JSON.parse` output: no node shared between parents (a shared node would be
 * walked once per path) and arrays without holes (they are walked by index).
 *
 * Freezes every object and array below `root`, and `root` too unless `freezeRoot` is false (the
 * verifier still writes the normalised `ars` into the payload). Throws `ERR_TOKEN_INVALID` when the
 * tree is deeper than {@link MAX_JSON_DEPTH}; the tree is then left partly frozen, and dropped.
 * Recursive, but never deeper than {@link MAX_JSON_DEPTH} calls: the depth is checked before each
 * descent. (A shared stack array would cost a write barrier per node pushed, the array being old.)
 */
export function freezeTree(root: object, what: 'header' | 'payload', freezeRoot = true): void {
  freezeBelow(root, 1, what);
  if (freezeRoot) Object.freeze(root);
}

/** Freezes the objects and arrays below `node`, which sits at `depth` (the root at 1). */
function freezeBelow(node: object, depth: number, what: 'header' | 'payload'): void {
  // JSON.parse output: no node is shared or already frozen, and arrays are dense (an index loop is
  // several times cheaper than for-in over an array's string keys).
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (typeof child === 'object' && child !== null) freezeChild(child, depth, what);
    }
  } else {
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) freezeChild(child, depth, what);
    }
  }
}

function freezeChild(child: object, parentDepth: number, what: 'header' | 'payload'): void {
  if (parentDepth + 1 > MAX_JSON_DEPTH) throw new TokenInvalidError(`token ${what} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  freezeBelow(child, parentDepth + 1, what);
  Object.freeze(child);
}
