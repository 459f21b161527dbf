/** `iam-authz decode TOKEN`: prints a token's parts without verifying anything (works offline). */
import type { IamClaims } from 'iam-authz';
import { jsonDepthExceeds } from '../console/http.js';
import { bareToken, escapeUnsafe, readStdinToken, visible } from './terminal.js';
import { parse, UsageError } from './usage.js';

/** One access reference of a token's `ars`, normalised. */
type AccessReference = IamClaims['ars'][number];

export const DECODE_HELP = `usage: iam-authz decode TOKEN
       iam-authz decode -          (reads the token from stdin)

Prints the token's header, its claims, its access references (ars) as a table and its expiry in
words. Works offline and DOES NOT VERIFY the token: use "iam-authz explain" for that.
TOKEN may be prefixed with "Bearer ". Control and bidi characters of the token's text are printed
as visible \\uXXXX escapes, never sent to the terminal.`;

export async function decodeCommand(args: string[]): Promise<number> {
  const { positionals } = parse(args, {}, true);
  const [raw, extra] = positionals;
  if (raw === undefined || extra !== undefined) throw new UsageError('expects exactly one TOKEN (or - to read it from stdin)');
  const token = raw === '-' ? await readStdinToken() : bareToken(raw);
  console.log(describeToken(token, Date.now()));
  return 0;
}

/** The decode report for `token` at `nowMs`; the token's text in it is escaped ({@link visible}), safe for a terminal. */
export function describeToken(token: string, nowMs: number): string {
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('not a compact JWS (expected three dot-separated parts)');
  const header = decodePart(parts[0] ?? '', 'header');
  const claims = decodePart(parts[1] ?? '', 'payload');
  const lines = ['NOT VERIFIED: decoded only; signature, issuer and expiry were not checked.', '', 'header'];
  for (const [k, v] of Object.entries(header)) lines.push(`  ${visible(k).padEnd(5)} ${json(v)}`);
  lines.push('', 'claims');
  for (const [k, v] of Object.entries(claims)) {
    if (k === 'ars') continue;
    lines.push(`  ${visible(k).padEnd(5)} ${json(v)}${k === 'exp' || k === 'iat' || k === 'nbf' ? `  (${timeInWords(v, nowMs)})` : ''}`);
  }
  lines.push('', 'expiry', `  ${expiryInWords(claims.exp, nowMs)}`);
  const ars = normalizeArs(claims.ars);
  lines.push('', `access references (ars): ${ars.length}`);
  if (ars.length > 0) {
    const rows = [['#', 'roles (r)', 'references (c)', 'nodes (n)'], ...ars.map((a, i) => [String(i + 1), list(a.r), list(a.c), list(a.n)])];
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
    for (const row of rows) lines.push(`  ${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}`);
  }
  return lines.join('\n');
}

/** A claim value as JSON (C0 escaped by JSON itself), with DEL, C1 and bidi characters escaped too. */
function json(value: unknown): string {
  return escapeUnsafe(JSON.stringify(value));
}

function list(items: readonly string[]): string {
  return items.map(visible).join(', ');
}

function decodePart(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new Error(`the ${what} is not base64url-encoded JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`the ${what} is not a JSON object`);
  // Printing walks the value recursively (JSON.stringify): bound its depth as the verifier does.
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) throw new Error(`the ${what} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value as Record<string, unknown>;
}

/** Deepest nesting printed, counting the top-level object as 1: the verifier's limit. */
const MAX_JSON_DEPTH = 32;

/**
 * The `ars` claim as the verifier reads it: `{ r, c, n }` of strings, anything else dropped. A copy
 * of the library's internal normaliser (this package uses only the library's public API).
 */
function normalizeArs(value: unknown): AccessReference[] {
  if (!Array.isArray(value)) return [];
  const out: AccessReference[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    out.push({ r: strings(entry, 'r'), c: strings(entry, 'c'), n: strings(entry, 'n') });
  }
  return out;
}

function strings(entry: object, field: 'r' | 'c' | 'n'): readonly string[] {
  if (!Object.hasOwn(entry, field)) return [];
  const items = (entry as Record<string, unknown>)[field];
  return Array.isArray(items) ? (items as unknown[]).filter((item): item is string => typeof item === 'string') : [];
}

function timeInWords(value: unknown, nowMs: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'not a number';
  const date = new Date(value * 1000);
  return Number.isNaN(date.getTime()) ? 'out of range' : `${date.toISOString()}, ${relative(value * 1000 - nowMs)}`;
}

function expiryInWords(exp: unknown, nowMs: number): string {
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return 'no valid exp claim: a verifier refuses this token';
  const delta = exp * 1000 - nowMs;
  return delta > 0 ? `expires ${relative(delta)}` : `EXPIRED ${relative(delta)}`;
}

/** "in 59 minutes" / "3 hours ago". */
export function relative(deltaMs: number): string {
  const abs = Math.abs(deltaMs) / 1000;
  const [n, unit] = abs < 90 ? [abs, 'second'] : abs < 5400 ? [abs / 60, 'minute'] : abs < 129_600 ? [abs / 3600, 'hour'] : [abs / 86_400, 'day'];
  const count = Math.round(n);
  const words = `${count} ${unit}${count === 1 ? '' : 's'}`;
  return deltaMs >= 0 ? `in ${words}` : `${words} ago`;
}
