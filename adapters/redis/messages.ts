/**
 * The channel's messages: JSON with `v: 1`, a policy hint (`{ v, issuer, application, changeId }`)
 * or a revocation (`{ v, type: 'revocation', jti | sub + issuedBefore, until }`). Parsed field by
 * field: anything else, or anything too long, is `undefined` (dropped, counted).
 */
import type { HintChannel } from '../../src/index.js';

type Hint = Parameters<HintChannel['publish']>[0];
type PolicyHint = Extract<Hint, { changeId: string }>;
type RevocationHint = Extract<Hint, { type: 'revocation' }>;

/** The longest hint field accepted, in characters. */
const MAX_FIELD = 1024;
/** The longest message read from the channel, in characters (three full fields and the JSON around them). */
const MAX_MESSAGE = 3 * MAX_FIELD * 6 + 128;

export function validField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD;
}

function wholeSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The hint in `message`, or `undefined` for anything else: only the known fields are kept. */
export function parseMessage(message: string): Hint | undefined {
  if (message.length > MAX_MESSAGE) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || (value as { v?: unknown }).v !== 1) return undefined;
  return checkedHint(value);
}

/** `value` as a hint, its fields checked and only they kept; else `undefined`. */
export function checkedHint(value: unknown): Hint | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, issuer, application, changeId, jti, sub, issuedBefore, until } = value as Record<string, unknown>;
  if (type === 'revocation') {
    if (!wholeSeconds(until)) return undefined;
    if (validField(jti) && sub === undefined && issuedBefore === undefined) return Object.freeze({ type, jti, until });
    if (jti === undefined && validField(sub) && wholeSeconds(issuedBefore)) return Object.freeze({ type, sub, issuedBefore, until });
    return undefined;
  }
  if (type !== undefined || !validField(issuer) || !validField(application) || !validField(changeId)) return undefined;
  return Object.freeze({ issuer, application, changeId });
}

/** The message to publish for `hint`, or `undefined` when it is malformed. */
export function formatHint(hint: unknown): string | undefined {
  const h = checkedHint(hint);
  if (h === undefined) return undefined;
  return JSON.stringify({ v: 1, ...h });
}

export function isRevocation(hint: Hint): hint is RevocationHint {
  return (hint as { type?: unknown }).type === 'revocation';
}

export type { Hint, PolicyHint, RevocationHint };
