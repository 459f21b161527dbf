/**
 * Process warnings for risky or deprecated settings, each emitted at most once per process (as
 * lru-cache does for its risky settings): a service that builds an authorizer per test or per
 * tenant should not flood its log.
 */
const emitted = new Set<string>();

/** Emits `message` as a process warning with `code`, unless a warning with that code was already emitted. */
export function warnOnce(code: string, message: string, type: 'Warning' | 'DeprecationWarning' = 'Warning'): void {
  if (emitted.has(code)) return;
  emitted.add(code);
  process.emitWarning(message, { type, code });
}
