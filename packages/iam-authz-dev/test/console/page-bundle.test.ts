/**
 * The console page's modules bundled into one classic script (esbuild): every module once, no
 * module syntax left, so it runs from a plain `<script src>` under the console's CSP.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundlePage } from '../../src/console/page-bundle.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'page-bundle-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

async function bundle(files: Record<string, string>): Promise<string> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return bundlePage(pathToFileURL(join(dir, 'page.ts')));
}

describe('bundlePage', () => {
  it('runs each module once, its imports first, with no import or export left', async () => {
    const js = await bundle({
      'types.ts': 'export interface Item { n: number }\n',
      'state.ts': "import type { Item } from './types.js';\nexport const items: Item[] = [];\nlog.push('state');\n",
      'dom.ts': "import { items } from './state.js';\nlog.push('dom');\nexport function count(): number { return items.length; }\n",
      'page.ts': "import { count as n } from './dom.js';\nimport { items } from './state.js';\nitems.push({ n: 1 });\nlog.push(`page ${n()}`);\n",
    });
    expect(js).not.toMatch(/^\s*(import|export)\b/m);
    const log: string[] = [];
    runInNewContext(js, { log });
    expect(log).toStrictEqual(['state', 'dom', 'page 1']);
  });

  it('the real page bundles into one script that defines render()', async () => {
    const js = await bundlePage(new URL('../../src/console/web/page.ts', import.meta.url));
    expect(js).toMatch(/function render\(/);
    expect(js).not.toMatch(/^\s*(import|export)\b/m);
  });

  it('a module that does not exist is an error naming it', async () => {
    await expect(bundle({ 'page.ts': "import { x } from './missing.js';\nconsole.log(x);\n" })).rejects.toThrow(/missing/);
  });
});
