/**
 * The inputs of `iam-authz check` (./check.ts), read and checked: an inventory file, and role
 * policies from a file or from an IAM's policy API. Whatever is wrong with them is a
 * {@link CheckInputError} of one sentence naming the file (or the IAM) and what is wrong; nothing
 * read from them is trusted (it is printed escaped, by the caller), and the token sent to an IAM is
 * never part of a message.
 */
import { open } from 'node:fs/promises';
import type { InventoryEntry } from 'iam-authz';
import { isLoopbackHost } from '../host-rule.js';
import { rolePolicyMistake, type RolePolicy } from '../policy.js';
import { visible } from './terminal.js';

/** Unreadable or invalid input: `iam-authz check` prints the message and exits with 2. */
export class CheckInputError extends Error {}

/** Largest file or policy answer read, in bytes: the library's own limit on a policy (16 MiB). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;
/** How long the IAM has to answer the policy request, body included. */
export const FETCH_TIMEOUT_MS = 10_000;

/** Where a policy came from, as the report names it, and the policies. */
export interface PolicySource {
  readonly name: string;
  readonly policies: readonly RolePolicy[];
}

/** The inventory in `file` (the JSON of `authorizer.inventory()`). */
export async function readInventory(file: string): Promise<InventoryEntry[]> {
  const name = visible(file);
  const value = parseJson(await readBounded(file, name), name);
  const swapped = looksLike(value, 'applicationId') ? ' (it looks like a role policy: are --inventory and --policy swapped?)' : '';
  if (!Array.isArray(value)) throw new CheckInputError(`${name} is not an inventory: expected an array, the JSON of authorizer.inventory()${swapped}`);
  (value as unknown[]).forEach((entry, i) => {
    const mistake = entryMistake(entry);
    if (mistake !== undefined) throw new CheckInputError(`${name} is not an inventory: entry ${i} ${mistake}${swapped || ' (expected the JSON of authorizer.inventory())'}`);
  });
  return value as InventoryEntry[];
}

function entryMistake(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'is not an object';
  const { service, permission, permissions, mode, route } = entry as Record<string, unknown>;
  if (typeof service !== 'string' || service.length === 0) return 'has no "service"';
  const many = Array.isArray(permissions) && permissions.length > 0 && permissions.every((p) => typeof p === 'string' && p.length > 0);
  const one = typeof permission === 'string' && permission.length > 0;
  if (one === many) return 'has not exactly one of "permission" (a key) and "permissions" (an array of keys)';
  if (mode !== undefined && mode !== 'enforce' && mode !== 'report') return 'has a "mode" other than "enforce" and "report"';
  if (route === undefined) return undefined;
  const r = (typeof route === 'object' && route !== null ? route : {}) as Record<string, unknown>;
  const http = typeof r.method === 'string' && typeof r.path === 'string';
  const nest = typeof r.controller === 'string' && typeof r.handler === 'string';
  return http || nest ? undefined : 'has a "route" that is neither { method, path } nor { controller, handler }';
}

/** The policies of `source`: a file, or with `token` the policy API at that URL. */
export async function readPolicies(source: string, token: string | undefined): Promise<PolicySource> {
  if (token === undefined) {
    const name = visible(source);
    return { name, policies: policiesIn(parseJson(await readBounded(source, name), name), name) };
  }
  const url = policyUrl(source);
  const name = visible(`${url.origin}${url.pathname}`);
  const body = await fetchPolicy(url, token, name);
  return { name, policies: policiesIn(parseJson(body, `the answer of ${name}`), `the answer of ${name}`) };
}

/** A role policy, or an array of them, one per application. */
function policiesIn(value: unknown, name: string): RolePolicy[] {
  const list = Array.isArray(value) ? value as unknown[] : [value];
  if (list.length === 0) throw new CheckInputError(`${name} holds no role policy: an empty array`);
  const seen = new Set<string>();
  list.forEach((policy, i) => {
    const mistake = rolePolicyMistake(policy);
    const where = Array.isArray(value) ? `in policy ${i} of the array, ` : '';
    const swapped = looksLike(value, 'service') ? ' (it looks like an inventory: are --inventory and --policy swapped?)' : '';
    if (mistake !== undefined) throw new CheckInputError(`${name} is not a role policy: ${where}${mistake}${swapped}`);
    const app = (policy as RolePolicy).applicationId;
    if (seen.has(app)) throw new CheckInputError(`${name} holds two policies of application ${visible(app)}: one per application`);
    seen.add(app);
  });
  return list as RolePolicy[];
}

/** Whether `value`, or the first item of the array it is, is an object with a `field`. */
function looksLike(value: unknown, field: string): boolean {
  const first: unknown = Array.isArray(value) ? (value as unknown[])[0] : value;
  return typeof first === 'object' && first !== null && Object.hasOwn(first, field);
}

/** `source` as the URL of a policy API; plain http only to a loopback host (the token would cross a network in clear). */
export function policyUrl(source: string): URL {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new CheckInputError(`--policy ${visible(source.slice(0, 200))} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CheckInputError(`--policy is a ${visible(url.protocol.slice(0, 20))} URL: only http and https URLs are fetched`);
  if (url.username !== '' || url.password !== '') throw new CheckInputError('--policy URL holds a user name or password: give the token with --token instead');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new CheckInputError(`--policy ${visible(url.origin)} is plain http to a host that is not loopback: the token would cross the network in clear text; use https`);
  }
  return url;
}

/** Whether `source` names a URL rather than a file: it has a scheme (`https://…`). */
export function isUrl(source: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(source);
}

/** The policy API's answer body: one GET, bounded in time and size, no redirect followed. */
async function fetchPolicy(url: URL, token: string, name: string): Promise<string> {
  // A token a header cannot carry would make fetch throw with the header's value in the message.
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) throw new CheckInputError('the token is not a bearer token (it holds characters a token cannot); it is not shown');
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let answer: Response;
  try {
    answer = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, redirect: 'manual', signal });
  } catch (error) {
    throw new CheckInputError(`cannot reach ${name}${causeOf(error, signal, token)}`);
  }
  if (answer.status < 200 || answer.status > 299) {
    await answer.body?.cancel().catch(() => undefined);
    const why = answer.status >= 300 && answer.status < 400 ? ' (a redirect, not followed)'
      : answer.status === 401 || answer.status === 403 ? ' (is the token valid, and from this IAM?)' : '';
    throw new CheckInputError(`${name} answered ${answer.status}${why}`);
  }
  const length = Number(answer.headers.get('content-length') ?? 0);
  if (length > MAX_INPUT_BYTES) throw new CheckInputError(`${name} answered with more than ${MAX_INPUT_BYTES} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (answer.body as ReadableStream<Uint8Array> | null)?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (next === undefined || next.done) break;
      size += next.value.length;
      if (size > MAX_INPUT_BYTES) {
        // The rest is never downloaded.
        await reader?.cancel().catch(() => undefined);
        throw new CheckInputError(`${name} answered with more than ${MAX_INPUT_BYTES} bytes`);
      }
      chunks.push(next.value);
    }
  } catch (error) {
    if (error instanceof CheckInputError) throw error;
    throw new CheckInputError(`cannot read the answer of ${name}${causeOf(error, signal, token)}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** ` (ECONNREFUSED)`, ` (no answer within 10 s)`: what failed, in words that cannot hold the token. */
function causeOf(error: unknown, signal: AbortSignal, token: string): string {
  if (signal.aborted) return ` (no answer within ${FETCH_TIMEOUT_MS / 1000} s)`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string' && /^[A-Z0-9_]+$/.test(cause.code)) return ` (${cause.code})`;
  // undici's own words ("bad port", "other side closed"); never one that quotes a header or the token.
  const words = typeof cause?.message === 'string' ? cause.message : '';
  return /^[a-z][a-z ]{0,60}$/i.test(words) && !words.includes(token) ? ` (${words})` : '';
}

/** The text of `file`, at most {@link MAX_INPUT_BYTES}; `name` is the file's name, escaped. */
async function readBounded(file: string, name: string): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
    const { size, isFile } = await handle.stat().then((s) => ({ size: s.size, isFile: s.isFile() }));
    if (!isFile) throw new CheckInputError(`${name} is not a file`);
    if (size > MAX_INPUT_BYTES) throw new CheckInputError(`${name} is larger than ${MAX_INPUT_BYTES} bytes`);
    return await handle.readFile('utf8');
  } catch (error) {
    if (error instanceof CheckInputError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new CheckInputError(code === 'ENOENT' ? `${name}: no such file`
      : code === 'EISDIR' ? `${name} is not a file`
        : code === 'EACCES' || code === 'EPERM' ? `${name} cannot be read: permission denied`
          : `${name} cannot be read${typeof code === 'string' ? ` (${code})` : ''}`);
  } finally {
    await handle?.close();
  }
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    // The parser's message quotes the text around the mistake: only its position is passed on.
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    throw new CheckInputError(`${name} is not JSON${at === undefined ? '' : ` (at character ${at})`}`);
  }
}
