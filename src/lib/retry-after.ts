/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds to wait: the floor a failed upstream answer sets
 * on the next attempt.
 */

/** Longest `Retry-After` honoured. */
export const MAX_RETRY_AFTER_MS = 600_000;

/**
 * Milliseconds to wait that a `Retry-After` value asks for (delay-seconds or an HTTP-date), capped
 * at {@link MAX_RETRY_AFTER_MS}; `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else if (/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - nowMs);
  } else return undefined;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * The `Retry-After` a failed upstream answer carried, as milliseconds to wait: only on 429 and 503,
 * where RFC 9110 gives it that meaning.
 */
export function retryAfterMs(error: { statusCode?: number | undefined; retryAfter?: string | undefined }, nowMs: number): number | undefined {
  if (error.statusCode !== 429 && error.statusCode !== 503) return undefined;
  return parseRetryAfter(error.retryAfter, nowMs);
}
