/**
 * The console page's script from its modules (`web/page.ts` and what it imports): bundled by
 * esbuild into one classic script (an IIFE), as the package build writes it to `web/page.js`, and
 * as `assets.ts` makes it when run from the sources. esbuild is a devDependency: the published
 * package ships the built `page.js` and never loads this bundler.
 */
import { fileURLToPath } from 'node:url';

/** The page's script, from its entry module (`web/page.ts`). */
export async function bundlePage(entry: URL): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    // The page is small and served to one developer: readable beats a few kB.
    minify: false,
    legalComments: 'none',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error(`bundlePage: esbuild wrote nothing for ${entry.href}`);
  return output.text;
}
