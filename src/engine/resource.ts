/**
 * Step 3 of the check: the resource reference of a request. `{ type, value }` becomes the exact
 * string `TYPE=value` (matched against `ars[].c`); `{ node }` is a node id (matched against `ars[].n`).
 */
import type { ResourceRef } from './decide.js';

/** A custom reference (`TYPE=value`) or a node id. */
export type ResourceQuery =
  | {
      /** Reference type, e.g. `VIN`; may not contain `=`. */
      readonly type: string;
      /** Reference value, e.g. the VIN; compared exactly. */
      readonly value: string;
    }
  | {
      /** Node id, matched against `ars[].n`. */
      readonly node: string;
    };

/** The reference to match, or `undefined` when the query names no usable resource (which denies). */
export function toResourceRef(resource: ResourceQuery | undefined): ResourceRef | undefined {
  if (typeof resource !== 'object' || (resource as unknown) === null) return undefined;
  if ('node' in resource) {
    return typeof resource.node === 'string' && resource.node.length > 0 ? { field: 'n', reference: resource.node } : undefined;
  }
  const { type, value } = resource as { type?: unknown; value?: unknown };
  // A type containing "=" would make "A=B=c" mean two things; values may contain "=".
  if (typeof type !== 'string' || type.length === 0 || type.includes('=')) return undefined;
  if (typeof value !== 'string' || value.length === 0) return undefined;
  return { field: 'c', reference: `${type}=${value}` };
}

/** A printable form of an unusable resource query, for the denial's `reference`. */
export function describeResource(resource: unknown): string {
  if (typeof resource !== 'object' || resource === null) return '';
  const { type, value, node } = resource as { type?: unknown; value?: unknown; node?: unknown };
  if (node !== undefined) return typeof node === 'string' ? node : '';
  return `${typeof type === 'string' ? type : ''}=${typeof value === 'string' ? value : ''}`;
}
