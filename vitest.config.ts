import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The examples import the package by name, as a user would; map those names to the sources
// (tsconfig.json "paths" does the same for tsc and tsx).
const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^iam-authz$/, replacement: src('./src/index.ts') },
      { find: /^iam-authz\/(express|koa|fastify)$/, replacement: src('./adapters/$1/index.ts') },
      { find: /^iam-authz\/(testing|client)$/, replacement: src('./src/$1/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 15_000,
    // Tests start real loopback servers; keep the 2-core machines from oversubscribing.
    maxWorkers: 2,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
