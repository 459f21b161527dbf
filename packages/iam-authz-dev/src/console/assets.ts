/**
 * The console page's static files, found beside this module through `import.meta.url`: in the
 * published package `web/page.js` is the build's output next to `web/page.html` and `web/page.css`;
 * run from the sources (tsx, vitest) there are only the page's modules (`web/page.ts` and what it
 * imports), which `page-bundle.ts` joins into that one script — so the page works from both.
 */
import { readFile } from 'node:fs/promises';
import { bundlePage } from './page-bundle.js';

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
      return bundlePage(new URL('page.ts', dir));
    }),
  ]);
  return { html, css, js };
}
