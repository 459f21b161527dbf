// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- run as is by Node 24, not compiled
// @ts-nocheck -- a plain Node 24 script (wrangler and miniflare need Node >= 22); .ci/workers runs it.
/**
 * The Cloudflare Workers suite: worker.mjs (the scenario table's app, ../app.mjs), bundled by
 * wrangler (its default conditions pick the package's files through the exports map) and run in
 * workerd by miniflare, answers the scenario table (../table.mjs, the one Node, Bun and Deno run)
 * through the fetch and Hono adapters, with the authorizer made at module scope and in the first
 * request. The upstreams (../upstreams.mjs: the development IAM and the fault server) run here, in
 * Node, on 127.0.0.1.
 *
 * Usage: node run.mjs <folder holding node_modules/wrangler and node_modules/miniflare> [answers.json]
 * Prints one line per check and `N passed, N failed`; exits 1 on any failure. The table's answers
 * are written to answers.json for ../compare.mjs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reporter } from '../report.mjs';
import { runTable } from '../table.mjs';
import { startUpstreams } from '../upstreams.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const [tools, answersFile] = process.argv.slice(2);
if (!tools) throw new Error('usage: node run.mjs <folder with wrangler and miniflare installed> [answers.json]');
const toolRequire = createRequire(join(tools, 'node_modules/'));
const { Miniflare } = await import(pathToFileURL(toolRequire.resolve('miniflare')).href);

const { check, done } = reporter();
const upstreams = await startUpstreams();
const { iam, faultBase } = upstreams;

// ---- Bundle: a scratch folder where `iam-authz` resolves by name to this package (its exports map).
const work = mkdtempSync(join(tmpdir(), 'iam-authz-workers-'));
let mf;
try {
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(root, join(work, 'node_modules/iam-authz'), 'dir');
  symlinkSync(realpathSync(join(root, 'node_modules/hono')), join(work, 'node_modules/hono'), 'dir');
  // The repository's layout: workers/worker.mjs imports ../app.mjs.
  mkdirSync(join(work, 'workers'));
  cpSync(join(here, '../app.mjs'), join(work, 'app.mjs'));
  cpSync(join(here, 'worker.mjs'), join(work, 'workers/worker.mjs'));
  cpSync(join(here, 'wrangler.jsonc'), join(work, 'workers/wrangler.jsonc'));
  const bundled = spawnSync(process.execPath, [toolRequire.resolve('wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', join(work, 'out'),
    '--define', `IAM_BASE_URL:${JSON.stringify(iam.baseUrl)}`, '--define', `FAULT_BASE_URL:${JSON.stringify(faultBase)}`], {
    cwd: join(work, 'workers'), encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
  });
  check('wrangler bundles the Worker', bundled.status === 0, `${bundled.stdout}\n${bundled.stderr}`);
  if (bundled.status !== 0) throw new Error('no bundle');

  // modulesRoot: module names are paths relative to it, and workerd refuses a name with '..'.
  mf = new Miniflare({ modules: true, modulesRoot: join(work, 'out'), scriptPath: join(work, 'out/worker.js'), compatibilityDate: '2026-04-01', compatibilityFlags: ['nodejs_compat'] });
  const answers = await runTable({ dispatch: (url, init) => mf.dispatchFetch(url, init), upstreams, check });
  if (answersFile) writeFileSync(answersFile, `${JSON.stringify({ runtime: 'workerd (miniflare)', answers }, null, 1)}\n`);
} catch (error) {
  check('the suite ran to its end', false, `${error?.name}: ${error?.message}`);
} finally {
  await mf?.dispose().catch(() => undefined);
  await upstreams.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(done() ? 0 : 1);
