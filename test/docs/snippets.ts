/**
 * Finds the ```ts blocks of Markdown files and typechecks each one on its own, as a user who pasted
 * it into a strict project would: `iam-authz*` imports resolve through the package's own `exports`
 * map (a package self-reference) to the built `.d.ts` files in dist/, never to the sources.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

export interface Snippet {
  /** Markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly code: string;
}

/** Info strings that mark a block as TypeScript; `ts nocheck` opts a block out (say why beside it). */
const OPEN = /^\s*(`{3,}|~{3,})\s*(ts|typescript)\b(.*)$/;

export function extractSnippets(file: string, markdown: string): { snippets: Snippet[]; skipped: number } {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i] ?? '');
    const fence = open?.[1];
    if (!open || fence === undefined) {
      // Skip over other fenced blocks so a ``` inside them is not taken for an opening.
      const other = /^\s*(`{3,}|~{3,})/.exec(lines[i] ?? '');
      if (other?.[1] !== undefined) i = closingLine(lines, i, other[1]);
      continue;
    }
    const end = closingLine(lines, i, fence);
    if (/\bnocheck\b/.test(open[3] ?? '')) skipped++;
    else snippets.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return { snippets, skipped };
}

function closingLine(lines: readonly string[], open: number, fence: string): number {
  for (let j = open + 1; j < lines.length; j++) {
    const line = (lines[j] ?? '').trim();
    if (line.startsWith(fence[0]!.repeat(fence.length)) && /^[`~]+$/.test(line)) return j;
  }
  return lines.length;
}

/** README.md, every docs/**\/*.md and every packages/*\/README.md, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const out = ['README.md'];
  for (const name of readdirSync(join(root, 'packages')).sort()) {
    if (existsSync(join(root, 'packages', name, 'README.md'))) out.push(join('packages', name, 'README.md'));
  }
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

/**
 * The compiler options of a strict user project. As strict as this repository (so snippets survive
 * `noUncheckedIndexedAccess` and `exactOptionalPropertyTypes` too), with no `paths`: module names
 * resolve as they would for a user.
 */
const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  skipLibCheck: true,
  // NestJS snippets use Nest's (legacy) decorators, as every Nest project enables them.
  experimentalDecorators: true,
  noEmit: true,
};

/**
 * Typechecks every snippet in one Program, each as its own module (a virtual file under
 * `<root>/.snippets/`, so that `import 'iam-authz'` is a self-reference of the package at `root`).
 * Returns one message per failing snippet, naming the Markdown line of each error.
 */
export function typecheckSnippets(root: string, snippets: readonly Snippet[], prelude: string): string[] {
  const virtual = new Map<string, Snippet>();
  snippets.forEach((s, n) => virtual.set(join(root, '.snippets', `${n}-${s.file.replaceAll(/[^A-Za-z0-9]/g, '_')}-L${s.line}.ts`), s));
  // `export {}` makes a block without imports a module too, so blocks never share declarations.
  const source = (s: Snippet): string => `${s.code}\nexport {};\n`;
  const host = ts.createCompilerHost(OPTIONS, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => {
    const s = virtual.get(f);
    return s ? source(s) : readFile.call(host, f);
  };
  host.getSourceFile = (f, lang, onError, create) => {
    const s = virtual.get(f);
    return s ? ts.createSourceFile(f, source(s), lang, true) : getSourceFile.call(host, f, lang, onError, create);
  };
  const program = ts.createProgram({ rootNames: [prelude, ...virtual.keys()], options: OPTIONS, host });

  const failures: string[] = [];
  const preludeErrors = ts.getPreEmitDiagnostics(program, program.getSourceFile(prelude));
  if (preludeErrors.length > 0) failures.push(`${relative(root, prelude)}: ${preludeErrors.map(flat).join('; ')}`);
  for (const [path, s] of virtual) {
    const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(path));
    if (diagnostics.length === 0) continue;
    const lines = diagnostics.map((d) => {
      const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
      // The block's first code line is the line after the fence.
      const where = at >= 0 && d.file?.fileName === path ? `${s.file}:${s.line + 1 + at}` : (d.file ? relative(root, d.file.fileName) : '?');
      return `  ${where}: TS${d.code} ${flat(d)}`;
    });
    failures.push(`${s.file}:${s.line} (\`\`\`ts block) does not typecheck:\n${lines.join('\n')}`);
  }
  return failures;
}

/** Where `specifier`, imported from a file at the repository root, resolves for a user (the declaration file). */
export function resolveAsUser(root: string, specifier: string): string | undefined {
  const from = join(root, '.snippets', 'probe.ts');
  return ts.resolveModuleName(specifier, from, OPTIONS, ts.sys, undefined, undefined, ts.ModuleKind.ESNext).resolvedModule?.resolvedFileName;
}

function flat(d: ts.Diagnostic): string {
  return ts.flattenDiagnosticMessageText(d.messageText, ' ');
}

export const repoRoot = join(dirname(new URL(import.meta.url).pathname), '..', '..');
