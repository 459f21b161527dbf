/**
 * Every ```ts block of README.md, docs/**\/*.md and packages/*\/README.md typechecks on its own against the built package
 * (issue 15 §1). Placeholders a snippet may use undeclared (`req`, `res`, `ctx`, `config`, …) are in
 * snippet-prelude.d.ts; a block may opt out with ```ts nocheck (use sparingly, say why beside it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './build.js';
import { extractSnippets, markdownFiles, repoRoot, resolveAsUser, typecheckSnippets, type Snippet } from './snippets.js';

const prelude = join(repoRoot, 'test/docs/snippet-prelude.d.ts');

describe('documentation snippets', () => {
  beforeAll(() => {
    ensureBuilt(repoRoot);
  }, 120_000);

  it('every ```ts block in README.md, docs/ and the packages\' READMEs typechecks against the built types', () => {
    const files = markdownFiles(repoRoot);
    // The pages the README's quick starts move everything else into: each is read, none skipped.
    for (const page of ['frameworks', 'configuration', 'decisions', 'caching-and-outages', 'dev-iam', 'errors-and-troubleshooting', 'security', 'performance', 'protocol', 'production', 'routes']) {
      expect(files).toContain(`docs/${page}.md`);
    }
    expect(files).toContain('packages/iam-authz-dev/README.md');
    const snippets: Snippet[] = [];
    for (const file of files) {
      snippets.push(...extractSnippets(file, readFileSync(join(repoRoot, file), 'utf8')).snippets);
    }
    expect(snippets.length).toBeGreaterThan(5);
    const failures = typecheckSnippets(repoRoot, snippets, prelude);
    if (failures.length > 0) expect.fail(`${failures.length} snippet(s) do not typecheck:\n\n${failures.join('\n\n')}\n`);
  }, 120_000);

  it('reports a broken snippet with its Markdown line and the TypeScript error', () => {
    const markdown = [
      '# doc', // 1
      '', // 2
      '```ts', // 3
      "import { createAuthorizer } from 'iam-authz';", // 4
      "const a = createAuthorizer({ baseUrl: 'http://127.0.0.1:4000' });", // 5
      'a.authorise(caller);', // 6: misspelt method, undeclared name
      '```', // 7
      '```ts nocheck', // 8
      'this is not TypeScript', // 9
      '```', // 10
      '```ts', // 11
      "const vin: string = req.params.vin; await authorizer.authorize(identity, { service: 's', permission: 'p', resource: { type: 'VIN', value: vin } }); app.listen(0); export { vin };", // 12: prelude names
      '```', // 13
      '- a list item:', // 14
      '    ```ts', // 15: fences may be indented inside list items
      "    const n: number = 'one';", // 16
      '    ```', // 17
    ].join('\n');
    const { snippets, skipped } = extractSnippets('docs/x.md', markdown);
    expect(skipped).toBe(1);
    expect(snippets.map((s) => s.line)).toEqual([3, 11, 15]);
    const failures = typecheckSnippets(repoRoot, snippets, prelude);
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatch(/^docs\/x\.md:3 /);
    expect(failures[1]).toMatch(/^docs\/x\.md:15 [^]*docs\/x\.md:16: TS2322 Type 'string' is not assignable to type 'number'/);
    expect(failures[0]).toMatch(/docs\/x\.md:6: TS2551 Property 'authorise' does not exist/);
    expect(failures[0]).toMatch(/docs\/x\.md:6: TS2304 Cannot find name 'caller'/);
  }, 120_000);

  it('resolves every iam-authz entry point to the built .d.ts files through the exports map', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const entries = Object.keys(pkg.exports).filter((k) => k !== './package.json');
    expect(entries).toContain('.');
    for (const entry of entries) {
      const specifier = `iam-authz${entry.slice(1)}`;
      expect(resolveAsUser(repoRoot, specifier), specifier).toMatch(new RegExp(`^${repoRoot}/dist/.+\\.d\\.ts$`));
    }
    // Paths outside the exports map do not resolve, as for a user (tsconfig "paths" play no part).
    expect(resolveAsUser(repoRoot, 'iam-authz/src/index.js')).toBeUndefined();
    const failures = typecheckSnippets(repoRoot, [
      { file: 'docs/x.md', line: 1, code: "import { createAuthorizer } from 'iam-authz/src/index.js';\nvoid createAuthorizer;" },
    ], prelude);
    expect(failures.join('\n')).toMatch(/docs\/x\.md:2: TS2307/);
  }, 120_000);
});
