/**
 * The console page's static files, found beside this module through `import.meta.url`: in the
 * published package `web/page.js` is the build's output next to `web/page.html` and `web/page.css`;
 * run from the sources (tsx, vitest) there is only `web/page.ts`, which is transpiled once with the
 * `typescript` devDependency — so the page works from both without a bundler.
 */
import { readFile } from 'node:fs/promises';

export interface ConsoleAssets {
  readonly html: string;
  readonly css: string;
  readonly js: string;
}

/** The directory holding the page's files. */
export const ASSETS_DIR = new URL('./web/', import.meta.url);

export async function loadAssets(dir: URL = ASSETS_DIR): Promise<ConsoleAssets> {
  const [html, css, js] = await Promise.all([
    readFile(new URL('page.html', dir), 'utf8'),
    readFile(new URL('page.css', dir), 'utf8'),
    readFile(new URL('page.js', dir), 'utf8').catch(async (error: unknown) => {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
      return transpileFromSource(new URL('page.ts', dir));
    }),
  ]);
  return { html, css, js };
}

async function transpileFromSource(file: URL): Promise<string> {
  const source = await readFile(file, 'utf8');
  // Only reached when running from the sources, where typescript is installed.
  const ts = (await import('typescript')).default;
  return ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, verbatimModuleSyntax: true },
    fileName: 'page.ts',
  }).outputText;
}
