/**
 * The console ships in the iam-authz-dev package: its build puts page.js beside page.html and
 * page.css under packages/iam-authz-dev/dist/, `files` publishes them, and the built dev IAM serves them (found through import.meta.url,
 * not through the sources). Needs `npm run build` first (CI runs `npm run check` before the tests);
 * skipped locally without a dist/.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The dev package's directory (packages/iam-authz-dev/).
const root = fileURLToPath(new URL('../../', import.meta.url));
const built = existsSync(`${root}dist/src/index.js`);
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
if (!built && !IN_CI) console.warn('console package test SKIPPED: no dist/ (run npm run build)');

describe.skipIf(!built && !IN_CI)('the console in the built package', () => {
  it('the packed file list holds the page, its style and its compiled script (not the sources)', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const files = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
    expect(files).toContain('dist/src/console/handler.js');
    expect(files).toContain('dist/src/console/assets.js');
    expect(files.filter((f) => f.includes('console/web/')).sort()).toStrictEqual([
      'dist/src/console/web/page.css', 'dist/src/console/web/page.html', 'dist/src/console/web/page.js',
    ]);
  }, 30_000);

  it('the built dev IAM serves the built page, script and style', async () => {
    const script = `
      const { startDevIam } = await import(${JSON.stringify(`${root}dist/src/index.js`)});
      const iam = await startDevIam({ config: { idps: [], applications: [], actors: [] } });
      const out = {};
      for (const p of ['/console', '/console/page.js', '/console/page.css']) {
        const r = await fetch(iam.baseUrl + p);
        out[p] = { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
      }
      await iam.close();
      process.stdout.write(JSON.stringify(out));
    `;
    // Plain node, no tsx: only what the package holds.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: '/' });
    const out = JSON.parse(stdout) as Record<string, { status: number; type: string; body: string }>;
    expect(out['/console']).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
    expect(out['/console/page.css']).toMatchObject({ status: 200, type: 'text/css; charset=utf-8' });
    expect(out['/console/page.js']).toMatchObject({ status: 200, type: 'text/javascript; charset=utf-8' });
    expect(out['/console/page.js']!.body).toContain('function render()');
  }, 30_000);
});
