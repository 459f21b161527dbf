/**
 * Watches a config file for changes by watching its DIRECTORY, filtered by the file's name: editors
 * and the console save by atomic rename (write a temporary file, rename it over the config), which
 * replaces the file's inode, and a watch on the file itself would stop at the first such save.
 */
import { watch, type FSWatcher, realpathSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export interface FileWatch {
  close(): void;
}

/**
 * Calls `onChange` once things settle (`debounceMs` after the last event) whenever `file` is
 * written, replaced or renamed into place. Through a symlink, the target's directory is watched too.
 * Watch errors (the directory removed, say) go to `onError`; the watch then stops.
 */
export function watchFile(file: string, onChange: () => void, onError: (error: Error) => void, debounceMs = 100): FileWatch {
  const targets = new Map<string, Set<string>>();
  const add = (path: string): void => {
    const dir = dirname(path);
    const names = targets.get(dir) ?? new Set<string>();
    names.add(basename(path));
    targets.set(dir, names);
  };
  add(resolve(file));
  try {
    add(realpathSync(file));
  } catch {
    // Not there (yet): its directory is watched all the same.
  }
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of targets) {
    const watcher = watch(dir, (_event, name) => {
      // Some platforms do not say which file changed: then any change may be ours.
      if (name !== null && !names.has(name)) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
    watcher.on('error', onError);
    watchers.push(watcher);
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
