/**
 * The console page's modules joined into one script: dependencies first, each once, no module
 * syntax left; what cannot share one scope is refused with the module's name.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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
  it('puts each module once, after the modules it imports, without import, export or types', async () => {
    // types.ts is imported for types only: erased, it adds nothing to the script.
    const js = await bundle({
      'types.ts': 'export interface Item { n: number }\n',
      'state.ts': "import type { Item } from './types.js';\nexport const items: Item[] = [];\n",
      'dom.ts': "import { items } from './state.js';\nexport function count(): number { return items.length; }\n",
      'page.ts': "import { count } from './dom.js';\nimport { items } from './state.js';\nexport {};\nitems.push({ n: 1 });\nconsole.log(count());\n",
    });
    const order = [...js.matchAll(/^\/\/ -+ (\S+)$/gm)].map((m) => m[1]);
    expect(order).toStrictEqual(['state.ts', 'dom.ts', 'page.ts']);
    expect(js).not.toMatch(/^\s*(import|export)\b/m);
    expect(js).not.toContain('Item[]');
    expect(js).toContain('const items = [];');
    expect(js).toContain('function count() {');
  });

  it('refuses an import cycle, naming it', async () => {
    await expect(bundle({
      'a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'page.ts': "import { a } from './a.js';\na();\n",
    })).rejects.toThrow('import cycle a.ts → b.ts → a.ts');
  });

  it('refuses a name declared by two modules', async () => {
    await expect(bundle({
      'a.ts': 'export function f(): void {}\nconst hidden = 1;\nexport const g = hidden;\n',
      'page.ts': "import { f } from './a.js';\nconst hidden = 2;\nf();\n",
    })).rejects.toThrow('"hidden" is declared by both a.ts and page.ts');
  });

  it.each([
    ["import { f as g } from './a.js';\n", 'renamed import "f as g"'],
    ["import * as a from './a.js';\n", 'only `import { a, b }'],
    ["import f from './a.js';\n", 'only `import { a, b }'],
    ["import './a.js';\n", 'only `import { a, b }'],
    ["import { readFile } from 'node:fs';\n", 'only `import { a, b }'],
    ["export { f } from './a.js';\n", 're-exports'],
    ['export default 1;\n', 'default exports'],
    ['export default function main(): void {}\n', 'default exports'],
    ['export const { x } = { x: 1 };\n', 'destructuring'],
  ])('refuses %j', async (line, why) => {
    await expect(bundle({ 'a.ts': 'export function f(): void {}\n', 'page.ts': `\n${line}` })).rejects.toThrow(`page.ts:2: ${why}`);
  });
});
