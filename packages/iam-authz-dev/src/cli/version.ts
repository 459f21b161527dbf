/**
 * The installed package's version, for `iam-authz --version`. The CLI runs from `src/cli/` (tsx)
 * or `dist/src/cli/` (built), so the package.json is found by walking up to the one named iam-authz-dev.
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (let url = new URL('../', import.meta.url); url.pathname !== '/'; url = new URL('../', url)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'iam-authz-dev' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here: keep walking up
    }
  }
  return 'unknown';
}
