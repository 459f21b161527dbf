/**
 * Joins the console page's browser modules (`web/*.ts`) into the one script the page loads, without
 * a bundler dependency: each module once, its dependencies first, its `import` statements and
 * `export` keywords removed, then transpiled by the `typescript` devDependency. The build writes
 * the result to `dist/.../web/page.js`; run from the sources, `assets.ts` calls it once per console.
 *
 * The modules then share one scope, so the joiner accepts only what stays correct there and refuses
 * the rest with an error naming the module: relative named imports without renaming, no re-exports
 * or default exports, no import cycle, and no top-level name declared by two modules.
 */
import { readFile } from 'node:fs/promises';
import type * as TS from 'typescript';

// Only loaded when building or running from the sources, where typescript is installed.
const loadTypescript = async () => (await import('typescript')).default;
type Typescript = Awaited<ReturnType<typeof loadTypescript>>;

interface PageModule {
  readonly name: string;
  /** The module's source with its import statements and export keywords cut out. */
  readonly body: string;
  /** The modules it imports, as URLs. */
  readonly imports: readonly URL[];
  /** The names it declares at top level. */
  readonly declares: readonly string[];
}

/** The page's script, from its entry module (`web/page.ts`) and every module that one imports. */
export async function bundlePage(entry: URL): Promise<string> {
  const ts = await loadTypescript();
  const modules = await inDependencyOrder(ts, entry);
  const owners = new Map<string, string>();
  for (const module of modules) {
    for (const name of module.declares) {
      const owner = owners.get(name);
      if (owner !== undefined) throw new Error(`console page: "${name}" is declared by both ${owner} and ${module.name}; the joined script has one scope`);
      owners.set(name, module.name);
    }
  }
  return modules.map((m) => {
    const js = ts.transpileModule(m.body, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, verbatimModuleSyntax: true },
      fileName: m.name,
    }).outputText;
    return `// ---------------------------------------------------------------- ${m.name}\n${js}`;
  }).join('\n');
}

/** Every module reachable from `entry`, each after the modules it imports. */
async function inDependencyOrder(ts: Typescript, entry: URL): Promise<PageModule[]> {
  const order: PageModule[] = [];
  const done = new Set<string>();
  const visiting: string[] = [];
  async function visit(file: URL): Promise<void> {
    if (done.has(file.href)) return;
    if (visiting.includes(file.href)) {
      const cycle = [...visiting.slice(visiting.indexOf(file.href)), file.href].map(nameOf).join(' → ');
      throw new Error(`console page: import cycle ${cycle}`);
    }
    visiting.push(file.href);
    const module = parseModule(ts, file, await readFile(file, 'utf8'));
    for (const dependency of module.imports) await visit(dependency);
    visiting.pop();
    done.add(file.href);
    order.push(module);
  }
  await visit(entry);
  return order;
}

function nameOf(href: string): string {
  return href.slice(href.lastIndexOf('/') + 1);
}

function parseModule(ts: Typescript, url: URL, text: string): PageModule {
  const name = nameOf(url.href);
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const cuts: { start: number; end: number }[] = [];
  const imports: URL[] = [];
  const declares: string[] = [];
  const refuse = (node: TS.Node, why: string): never => {
    const { line } = file.getLineAndCharacterOfPosition(node.getStart());
    throw new Error(`console page: ${name}:${line + 1}: ${why}`);
  };
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const specifier = (statement.moduleSpecifier as TS.StringLiteral).text;
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      if (!/^\.\/[\w-]+\.js$/.test(specifier) || clause === undefined || clause.name !== undefined || named === undefined || !ts.isNamedImports(named)) {
        refuse(statement, "only `import { a, b } from './module.js'` joins into one script");
      }
      for (const element of (named as TS.NamedImports).elements) {
        if (element.propertyName !== undefined) refuse(element, `renamed import "${element.propertyName.text} as ${element.name.text}" cannot share one scope`);
      }
      // `import type` is erased with its module's types: nothing of that module runs in the page for it.
      if ((clause as TS.ImportClause).phaseModifier !== ts.SyntaxKind.TypeKeyword) imports.push(new URL(specifier.replace(/\.js$/, '.ts'), url));
      cuts.push({ start: statement.getStart(), end: statement.getEnd() });
      continue;
    }
    if (ts.isExportDeclaration(statement)) {
      // `export {}` and `export { a }` only mark names of this module; re-exports would need another scope.
      if (statement.moduleSpecifier !== undefined) refuse(statement, 're-exports do not join into one script');
      cuts.push({ start: statement.getStart(), end: statement.getEnd() });
      continue;
    }
    if (ts.isExportAssignment(statement)) refuse(statement, 'default exports do not join into one script');
    for (const modifier of ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : []) {
      if (modifier.kind === ts.SyntaxKind.DefaultKeyword) refuse(statement, 'default exports do not join into one script');
      if (modifier.kind === ts.SyntaxKind.ExportKeyword) cuts.push({ start: modifier.getStart(), end: modifier.getEnd() });
    }
    declares.push(...declaredNames(ts, statement, refuse));
  }
  let body = '';
  let at = 0;
  for (const cut of cuts.sort((a, b) => a.start - b.start)) {
    body += text.slice(at, cut.start);
    at = cut.end;
  }
  body += text.slice(at);
  return { name, body, imports, declares };
}

function declaredNames(ts: Typescript, statement: TS.Statement, refuse: (node: TS.Node, why: string) => never): string[] {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.map((d) => (ts.isIdentifier(d.name) ? d.name.text : refuse(d, 'destructuring at top level does not join into one script')));
  }
  if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)
    || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement)) {
    return statement.name === undefined ? [] : [statement.name.text];
  }
  return [];
}
