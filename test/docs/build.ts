/**
 * The documentation tests check the packages as they ship: the built types in dist/ (the library)
 * and packages/iam-authz-dev/dist/ (the development kit, which builds against the library's). A fresh
 * `npm ci && npm test` has no dist/, and a developer's may be older than the sources, so build
 * (the steps of `npm run build` but its `rm -rf dist`, which would pull dist/ from under other test
 * files: both tsc projects and the console page's assets) when dist/ is missing or stale.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

export function ensureBuilt(root: string): void {
  const dev = join(root, 'packages/iam-authz-dev');
  let built: number;
  try {
    built = Math.min(statSync(join(root, 'dist/src/index.d.ts')).mtimeMs, statSync(join(dev, 'dist/src/index.d.ts')).mtimeMs);
  } catch {
    built = 0;
  }
  const sources = Math.max(
    newestMtime(join(root, 'src')), newestMtime(join(root, 'adapters')), newestMtime(join(dev, 'src')),
    statSync(join(root, 'package.json')).mtimeMs, statSync(join(dev, 'package.json')).mtimeMs,
  );
  if (built >= sources) return;
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'pipe' });
  execFileSync(process.execPath, [tsc, '-p', join(dev, 'tsconfig.build.json')], { cwd: dev, stdio: 'pipe' });
  execFileSync(process.execPath, [tsc, '-p', join(dev, 'src/console/web/tsconfig.json')], { cwd: dev, stdio: 'pipe' });
  for (const asset of ['page.html', 'page.css']) copyFileSync(join(dev, 'src/console/web', asset), join(dev, 'dist/src/console/web', asset));
}
