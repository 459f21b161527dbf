/**
 * The development IAM's signing keys kept in a file, so that tokens (and printed `curl` lines)
 * keep working after a restart. Private keys: the file is written with mode 0600, atomically (a
 * temporary file, then rename), and belongs in `.gitignore`. A file that is not what this module
 * wrote is an error naming the file, never silently replaced.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { generateSigningKey, signingKeyFromJwk, type SigningKey } from './sign-jwt.js';

/** Not defined on Windows, which has no symlink race of this kind to close. */
const NOFOLLOW = (constants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0;

/** The signing keys of a development IAM: its token keys (current first) and the built-in IdP's key. */
export interface DevKeys {
  keys: SigningKey[];
  idpKey: SigningKey;
}

/** Thrown when the key file exists but cannot be used; names the file and says why. */
export class DevKeyFileError extends Error {
  constructor(file: string, mistake: string, options?: { cause?: unknown; remedy?: string }) {
    super(`development IAM key file ${file}: ${mistake} (${options?.remedy ?? 'delete it to start with new keys'})`, options);
    this.name = 'DevKeyFileError';
  }
}

/**
 * The keys in `file`, or new keys written to it when it does not exist. As ssh does with private
 * keys, a file another local user could have written (a symlink, another owner, group- or
 * world-writable) is refused before it is read: its keys would sign tokens someone else chose. So
 * is one they could read (any group or other bit: 0644, 0640), whose keys may be known to them.
 */
export function loadOrCreateKeys(file: string): DevKeys {
  let link: Stats;
  try {
    link = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new DevKeyFileError(file, 'cannot be read', { cause: error });
    const fresh = { keys: [generateSigningKey()], idpKey: generateSigningKey() };
    saveKeys(file, fresh);
    return fresh;
  }
  if (link.isSymbolicLink()) throw new DevKeyFileError(file, 'is a symbolic link, refused (it may point at a file someone else controls)', { remedy: 'give the path of the file itself' });
  let text: string;
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: the file swapped for a link after the lstat is not followed either.
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW);
    checkOwnership(file, fstatSync(fd));
    text = readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof DevKeyFileError) throw error;
    throw new DevKeyFileError(file, 'cannot be read', { cause: error });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new DevKeyFileError(file, 'is not JSON');
  }
  const { keys, idpKey } = (typeof doc === 'object' && doc !== null ? doc : {}) as { keys?: unknown; idpKey?: unknown };
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 2 || typeof idpKey !== 'object' || idpKey === null) {
    throw new DevKeyFileError(file, 'must hold { "keys": [1 or 2 private RSA JWKs], "idpKey": a private RSA JWK }');
  }
  try {
    return { keys: keys.map((k) => privateKey(k)), idpKey: privateKey(idpKey) };
  } catch (error) {
    throw new DevKeyFileError(file, 'holds a key that is not a private RSA JWK with a kid', { cause: error });
  }
}

/** Writes `keys` to `file` (mode 0600) through a temporary file and a rename. */
export function saveKeys(file: string, keys: DevKeys): void {
  const doc = { keys: keys.keys.map(exportPrivate), idpKey: exportPrivate(keys.idpKey) };
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600, flush: true });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new DevKeyFileError(file, 'cannot be written', { cause: error });
  }
}

/**
 * A regular file of this process's user that no one else may read or write; checked on the open
 * descriptor, so the file judged is the file read. POSIX only: Windows has no uid and no mode bits
 * to judge (its ACLs are another matter), so there only "a regular file" is checked.
 */
function checkOwnership(file: string, stats: Stats): void {
  if (!stats.isFile()) throw new DevKeyFileError(file, 'is not a regular file');
  const uid = process.getuid?.();
  if (uid === undefined) return;
  if (stats.uid !== uid) {
    throw new DevKeyFileError(file, `is owned by uid ${stats.uid}, not by this process's user (uid ${uid}); private keys must be the user's own`, { remedy: 'chown it to this user, or delete it to start with new keys' });
  }
  const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
  if ((stats.mode & 0o022) !== 0) {
    throw new DevKeyFileError(file, `is group- or world-writable (mode ${mode}); another user could replace the keys`, { remedy: 'run chmod 600 on it' });
  }
  // ssh's rule (any access for group or others), for root too. Refused rather than tightened: the
  // keys may already have been copied, and only the user can tell whether to keep them.
  if ((stats.mode & 0o077) !== 0) {
    throw new DevKeyFileError(file, `is open to group or others (mode ${mode}); its private keys may already have been read`, {
      remedy: 'run chmod 600 on it if no one else can have read it, or delete it to start with new keys',
    });
  }
}

function privateKey(jwk: unknown): SigningKey {
  const k = jwk as Record<string, unknown>;
  if (typeof k !== 'object' || k.kty !== 'RSA' || typeof k.kid !== 'string' || typeof k.d !== 'string') throw new TypeError('not a private RSA JWK with a kid');
  return signingKeyFromJwk(k);
}

function exportPrivate(key: SigningKey): Record<string, unknown> {
  return { ...key.privateKey.export({ format: 'jwk' }), kid: key.kid };
}
