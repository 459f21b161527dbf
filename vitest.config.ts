import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { subpaths } from './subpaths.js';

// The examples and the development kit import the packages by name, as a user would; map those names to the sources
// (tsconfig.json "paths" does the same for tsc and tsx). Both come from package.json "exports".
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export default defineConfig({
  resolve: {
    alias: subpaths.map(({ specifier, source }) => ({
      find: new RegExp(`^${escape(specifier)}$`),
      replacement: fileURLToPath(new URL(source, import.meta.url)),
    })),
  },
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 15_000,
    // Tests start real loopback servers; keep the 2-core machines from oversubscribing.
    maxWorkers: 2,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
