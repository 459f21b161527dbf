// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- run as is by Node 24, not compiled
// @ts-nocheck -- a plain Node 24 script (wrangler and miniflare need Node >= 22).
/**
 * Bundling and running a Worker as the workerd suite does (run.mjs, and bench/scenarios/runtimes/workerd.mjs):
 * wrangler@4 and miniflare from the folder .ci/workers installs them into (.ci/lib.sh `npm_tool`),
 * a scratch folder where `iam-authz` resolves by name to this package (its exports map, wrangler's
 * default conditions), `wrangler deploy --dry-run` to bundle, and miniflare (workerd,
 * `nodejs_compat`) to run the bundle.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** wrangler and miniflare from `tools`, the folder holding their node_modules. */
export async function workerTools(tools) {
  const toolRequire = createRequire(join(tools, 'node_modules/'));
  const { Miniflare } = await import(pathToFileURL(toolRequire.resolve('miniflare')).href);
  return { Miniflare, wrangler: toolRequire.resolve('wrangler/bin/wrangler.js') };
}

/**
 * Bundles a Worker in a fresh scratch folder (returned as `work`; the caller removes it). `files`
 * maps paths in the scratch folder to files to copy there, `links` names packages of this
 * repository's node_modules to link besides iam-authz, `dir` is the folder (in the scratch folder)
 * holding wrangler.jsonc, `defines` are wrangler --define pairs (values are JS source).
 */
export function bundleWorker({ wrangler, files, links = [], dir, defines = {} }) {
  const work = mkdtempSync(join(tmpdir(), 'iam-authz-workers-'));
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(root, join(work, 'node_modules/iam-authz'), 'dir');
  for (const name of links) symlinkSync(realpathSync(join(root, 'node_modules', name)), join(work, 'node_modules', name), 'dir');
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(dirname(join(work, to)), { recursive: true });
    cpSync(from, join(work, to));
  }
  const bundled = spawnSync(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', join(work, 'out'),
    ...Object.entries(defines).flatMap(([k, v]) => ['--define', `${k}:${v}`])], {
    cwd: join(work, dir), encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
  });
  return { work, ok: bundled.status === 0, output: `${bundled.stdout}\n${bundled.stderr}` };
}

/** The bundle of `bundleWorker` run in workerd by miniflare. */
export function startWorker(Miniflare, work) {
  // modulesRoot: module names are paths relative to it, and workerd refuses a name with '..'.
  return new Miniflare({ modules: true, modulesRoot: join(work, 'out'), scriptPath: join(work, 'out/worker.js'), compatibilityDate: '2026-04-01', compatibilityFlags: ['nodejs_compat'] });
}
