/**
 * The two syntaxes of Express route paths, as tokens: Express 4's (path-to-regexp 0.1: `:id`,
 * `:id(\\d+)`, `:id?`, `.:format`, `*`) and Express 5's (path-to-regexp 8: `:id`, `*splat`, `{…}`
 * optional, `\\` escapes, `:"quoted"`). An optional part is a group; audit-syntax.ts expands them.
 */

/** Literal text, a parameter (optionally constrained by `pattern`), a wildcard, or a RegExp. */
export interface Part { readonly kind: 'text' | 'param' | 'wildcard' | 'regexp'; readonly value: string; readonly pattern?: string }
export type Token = Part | { readonly kind: 'group'; readonly tokens: readonly Token[] };

// The tokens path-to-regexp 0.1 itself looks for (escape | [/][.]:name[(pattern)][*][?] | *); a `.` is text.
const EXPRESS4 = /\\(.)|(\/)?(\.)?:(\w+)(\(.*?\))?(\*)?(\?)?|\*/g;

export function express4Tokens(path: string): Token[] {
  const tokens: Token[] = [];
  let last = 0;
  let unnamed = 0;
  for (const m of path.matchAll(EXPRESS4)) {
    tokens.push({ kind: 'text', value: path.slice(last, m.index) + (m[1] ?? '') });
    last = m.index + m[0].length;
    const [match, , slash, format, name, pattern, star, optional] = m;
    if (m[1] !== undefined) continue;
    if (match === '*' || name === undefined) {
      tokens.push({ kind: 'wildcard', value: String(unnamed++) });
      continue;
    }
    const param: Part = { kind: star ? 'wildcard' : 'param', value: name, ...(pattern ? { pattern: pattern.slice(1, -1) } : {}) };
    const own: Token[] = [{ kind: 'text', value: (slash ?? '') + (format ?? '') }, param];
    if (optional) tokens.push({ kind: 'group', tokens: own });
    else tokens.push(...own);
  }
  tokens.push({ kind: 'text', value: path.slice(last) });
  return tokens;
}

export function express5Tokens(path: string): Token[] {
  let i = 0;
  const name = (): string => {
    if (path[i] !== '"') {
      const id = /^[$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*/u.exec(path.slice(i))?.[0] ?? '';
      i += id.length;
      return id;
    }
    let quoted = '';
    for (i++; i < path.length && path[i] !== '"'; i++) quoted += (path[i] === '\\' ? path[++i] : path[i]) ?? '';
    i++;
    return quoted;
  };
  const group = (inside: boolean): Token[] => {
    const tokens: Token[] = [];
    while (i < path.length) {
      const c = path[i++] as string;
      if (c === '}' && inside) return tokens;
      if (c === '{') tokens.push({ kind: 'group', tokens: group(true) });
      else if (c === ':' || c === '*') tokens.push({ kind: c === ':' ? 'param' : 'wildcard', value: name() });
      else tokens.push({ kind: 'text', value: c === '\\' ? (path[i++] ?? '') : c });
    }
    return tokens;
  };
  return group(false);
}
