/**
 * The API report: every name each subpath of the library exports (package.json "exports", through
 * subpaths.js), values and types, with its kind. `npm run api:report` writes it to
 * api/iam-authz.api.md; test/docs/api-report.test.ts fails when the exports and the committed file
 * differ, so every change to the public surface shows in review.
 *
 * Read from the sources with the TypeScript compiler: the same modules the build turns into the
 * published .d.ts, without needing a build first.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { packageName, subpaths } from '../subpaths.js';

/** One exported name. */
export interface ApiEntry {
  readonly name: string;
  /** `function`, `class`, `const`, `interface`, `type`, …; `+` joins the kinds of a merged name. */
  readonly kind: string;
  /** Exported as a type only (`export type { … }`, an interface, a type alias). */
  readonly typeOnly: boolean;
  /** Whether its declaration has a TSDoc comment (not part of the written report). */
  readonly documented: boolean;
}

/** What one subpath exports, by name. */
export interface ApiSubpath {
  readonly specifier: string;
  readonly source: string;
  readonly entries: readonly ApiEntry[];
}

const root = fileURLToPath(new URL('../', import.meta.url));

/** The report's path in the repository. */
export const REPORT_PATH = 'api/iam-authz.api.md';

/** The subpaths of the library (not the development kit, a package of its own). */
function librarySubpaths(): { specifier: string; source: string }[] {
  return subpaths.filter(({ specifier }) => specifier === packageName || specifier.startsWith(`${packageName}/`));
}

function kindOf(declaration: ts.Declaration): string {
  if (ts.isFunctionDeclaration(declaration)) return 'function';
  if (ts.isClassDeclaration(declaration)) return 'class';
  if (ts.isInterfaceDeclaration(declaration)) return 'interface';
  if (ts.isTypeAliasDeclaration(declaration)) return 'type';
  if (ts.isEnumDeclaration(declaration)) return 'enum';
  if (ts.isModuleDeclaration(declaration)) return 'namespace';
  if (ts.isVariableDeclaration(declaration)) return (ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const) !== 0 ? 'const' : 'let';
  return ts.SyntaxKind[declaration.kind];
}

/** Whether an alias declaration on the way to the exported name is `export type` / `import type`. */
function isTypeOnlyAlias(declaration: ts.Declaration): boolean {
  if (ts.isExportSpecifier(declaration)) return declaration.isTypeOnly || declaration.parent.parent.isTypeOnly;
  if (ts.isImportSpecifier(declaration)) return declaration.isTypeOnly || declaration.parent.parent.phaseModifier === ts.SyntaxKind.TypeKeyword;
  if (ts.isImportClause(declaration)) return declaration.phaseModifier === ts.SyntaxKind.TypeKeyword;
  return false;
}

/** Every library subpath's exports, sorted by name. */
export function apiReport(): ApiSubpath[] {
  const configFile = `${root}tsconfig.json`;
  const { config } = ts.readConfigFile(configFile, (path) => ts.sys.readFile(path)) as { config: unknown };
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
  const entries = librarySubpaths().map(({ specifier, source }) => ({ specifier, source, file: `${root}${source}` }));
  const program = ts.createProgram(entries.map((e) => e.file), { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  return entries.map(({ specifier, source, file }) => {
    const sourceFile = program.getSourceFile(file);
    const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
    if (moduleSymbol === undefined) throw new Error(`api-report: cannot read ${source}`);
    const names = checker.getExportsOfModule(moduleSymbol).map((exported): ApiEntry => {
      let typeOnly = false;
      let symbol = exported;
      // Follow re-exports and imports one step at a time, noting any `type`-only step.
      while ((symbol.flags & ts.SymbolFlags.Alias) !== 0) {
        if (symbol.declarations?.some(isTypeOnlyAlias) === true) typeOnly = true;
        symbol = checker.getImmediateAliasedSymbol(symbol) ?? checker.getAliasedSymbol(symbol);
      }
      const kinds = [...new Set((symbol.declarations ?? []).map(kindOf))];
      const isValue = (symbol.flags & ts.SymbolFlags.Value) !== 0;
      const documented = symbol.getDocumentationComment(checker).some((part) => part.text.trim() !== '');
      return { name: exported.name, kind: kinds.join(' + '), typeOnly: typeOnly || !isValue, documented };
    });
    return { specifier, source, entries: names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  });
}

/** The report as Markdown: a count, then one list per subpath. */
export function renderReport(report: readonly ApiSubpath[]): string {
  const total = report.reduce((n, s) => n + s.entries.length, 0);
  const lines = [
    `# ${packageName}: the public API`,
    '',
    '<!-- Generated by `npm run api:report` (scripts/api-report.ts); test/docs/api-report.test.ts checks it. Do not edit. -->',
    '',
    `Every name each subpath of package.json "exports" exports: ${total} in all. A value is usable at`,
    'run time; a type (`type`) only in type positions.',
    '',
    '| subpath | values | types | names |',
    '|---|---:|---:|---:|',
    ...report.map((s) => {
      const types = s.entries.filter((e) => e.typeOnly).length;
      return `| \`${s.specifier}\` | ${s.entries.length - types} | ${types} | ${s.entries.length} |`;
    }),
    `| all | ${report.reduce((n, s) => n + s.entries.filter((e) => !e.typeOnly).length, 0)} | ${report.reduce((n, s) => n + s.entries.filter((e) => e.typeOnly).length, 0)} | ${total} |`,
  ];
  for (const s of report) {
    lines.push('', `## \`${s.specifier}\``, '', `From \`${s.source}\`.`, '');
    for (const e of s.entries) lines.push(`- \`${e.name}\` — ${e.kind}${e.typeOnly && !/^(interface|type)$/.test(e.kind) ? ' (type only)' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The committed report, or `undefined` when there is none. */
export function committedReport(): string | undefined {
  try {
    return readFileSync(`${root}${REPORT_PATH}`, 'utf8');
  } catch {
    return undefined;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderReport(apiReport());
  if (process.argv.includes('--stdout')) process.stdout.write(text);
  else {
    mkdirSync(`${root}api`, { recursive: true });
    writeFileSync(`${root}${REPORT_PATH}`, text);
    process.stdout.write(`api-report: wrote ${REPORT_PATH}\n`);
  }
}
