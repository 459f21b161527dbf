/**
 * Whether a handler registered at one path runs for EVERY request of a route at another: only
 * then does its guard count for that route. Where it cannot be sure (a pattern it cannot compare,
 * a wildcard under a plain parameter), it says no, so the audit errs towards reporting a hole.
 */
import type { Part, Segment, Segments } from './audit-syntax.js';

/** Middleware mounted at `at` (`app.use(at, …)`, matching any path below it) runs for every request of `route`. */
export function coversPrefix(at: Segments, route: Segments): boolean {
  return covers(at, route, false);
}

/** An earlier route at `at` (matching its whole path) runs for every request of `route`. */
export function coversExactly(at: Segments, route: Segments): boolean {
  return covers(at, route, true);
}

function covers(at: Segments, route: Segments, exact: boolean): boolean {
  for (const [n, segment] of at.entries()) {
    if (segment.parts.length === 1 && segment.parts[0]?.kind === 'wildcard') return true;
    const other = route[n];
    if (other === undefined || !segmentCovers(segment, other)) return false;
  }
  return !exact || at.length === route.length;
}

function segmentCovers(segment: Segment, other: Segment): boolean {
  const [only] = segment.parts;
  // A plain parameter takes any one segment; a wildcard there may start with an empty one.
  if (segment.parts.length === 1 && only?.kind === 'param' && only.pattern === undefined) return other.parts.every((p) => p.kind === 'text' || p.kind === 'param');
  return segment.parts.length === other.parts.length && segment.parts.every((part, n) => partCovers(part, other.parts[n] as Part, segment.sensitive, other.sensitive));
}

function partCovers(part: Part, other: Part, sensitive: boolean, otherSensitive: boolean): boolean {
  if (part.kind !== other.kind || part.pattern !== other.pattern) return false;
  if (part.kind === 'param' || part.kind === 'wildcard') return true;
  if (part.kind === 'regexp') return part.value === other.value;
  if (sensitive) return part.value === other.value && (otherSensitive || part.value.toLowerCase() === part.value.toUpperCase());
  return part.value.toLowerCase() === other.value.toLowerCase();
}
