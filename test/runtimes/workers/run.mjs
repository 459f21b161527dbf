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
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reporter } from '../report.mjs';
import { runTable } from '../table.mjs';
import { startUpstreams } from '../upstreams.mjs';
import { bundleWorker, startWorker, workerTools } from './bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const [tools, answersFile] = process.argv.slice(2);
if (!tools) throw new Error('usage: node run.mjs <folder with wrangler and miniflare installed> [answers.json]');
const { Miniflare, wrangler } = await workerTools(tools);

const { check, done } = reporter();
const upstreams = await startUpstreams();
const { iam, faultBase } = upstreams;

// ---- Bundle: a scratch folder where `iam-authz` resolves by name to this package (its exports map).
let work;
let mf;
try {
  // The repository's layout: workers/worker.mjs imports ../app.mjs.
  const bundled = bundleWorker({
    wrangler, links: ['hono'], dir: 'workers',
    files: { 'app.mjs': join(here, '../app.mjs'), 'workers/worker.mjs': join(here, 'worker.mjs'), 'workers/wrangler.jsonc': join(here, 'wrangler.jsonc') },
    defines: { IAM_BASE_URL: JSON.stringify(iam.baseUrl), FAULT_BASE_URL: JSON.stringify(faultBase) },
  });
  work = bundled.work;
  check('wrangler bundles the Worker', bundled.ok, bundled.output);
  if (!bundled.ok) throw new Error('no bundle');

  mf = startWorker(Miniflare, work);
  const answers = await runTable({ dispatch: (url, init) => mf.dispatchFetch(url, init), upstreams, check });
  if (answersFile) writeFileSync(answersFile, `${JSON.stringify({ runtime: 'workerd (miniflare)', answers }, null, 1)}\n`);
} catch (error) {
  check('the suite ran to its end', false, `${error?.name}: ${error?.message}`);
} finally {
  await mf?.dispose().catch(() => undefined);
  await upstreams.close();
  if (work) rmSync(work, { recursive: true, force: true });
}
process.exit(done() ? 0 : 1);
