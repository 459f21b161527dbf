// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default defineConfig(
  // snippet-prelude.d.ts is outside tsconfig.json on purpose (its globals are for doc snippets only).
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'api-docs/**', 'test/docs/snippet-prelude.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['typedoc.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // The shipped source stays small enough to hold in mind, and its modules form no cycle
    // (a cycle is two layers that point at each other: one of them is in the wrong place).
    files: ['src/**/*.ts', 'adapters/**/*.ts', 'packages/*/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // Adapters are thin shims over the public core and the adapter kit: no reaching into internals
    // but the one entry the library's own adapters share (src/adapter/internal.ts, not a subpath).
    files: ['adapters/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        regex: '^\\.\\./\\.\\./src/(?!(index|adapter/index|adapter/internal)\\.js$)',
        message: 'adapters import only the public core (../../src/index.js), the adapter kit (../../src/adapter/index.js) and the adapters\' internal entry (../../src/adapter/internal.js)',
      }] }],
    },
  },
  {
    // Plain scripts run by Node, Bun and Deno alike; tsc (checkJs) already refuses undefined names.
    files: ['test/runtimes/**/*.mjs'],
    rules: { 'no-undef': 'off' },
  },
  {
    // The development kit is a package of its own: it reaches the library by its public names only.
    files: ['packages/*/src/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+(src|adapters)/', message: 'the development kit imports the library by its public names (iam-authz, iam-authz/fetch, …)' }] }],
    },
  },
  {
    files: ['test/**', 'bench/**', 'examples/**', 'packages/*/test/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
