/**
 * Atomic replacement of the development IAM's config file: the new text goes to a temporary file
 * beside it, is fsynced, then renamed over the original (and the directory fsynced), so a crash or
 * a full disk leaves the old file or the new one — never half of one — and readers never see a
 * truncated file.
 */
import { randomBytes } from 'node:crypto';
import { open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Prefix and suffix of the temporary files, so tests and humans can recognise leftovers. */
export const TEMP_SUFFIX = '.tmp';

export async function writeFileAtomic(path: string, text: string): Promise<void> {
  // Through a symlink, replace its target: renaming over the link would turn it into a plain file.
  const file = await realpath(path).catch(() => path);
  const dir = dirname(file);
  const mode = await stat(file).then((s) => s.mode & 0o777, () => 0o644);
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  // 'wx': never write through a file someone placed at the temporary name.
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      // The umask applies to open()'s mode: set the file's own mode explicitly.
      await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  // The rename is durable only once the directory entry is; not every platform can fsync a directory.
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // best effort
  }
}
