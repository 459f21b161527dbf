/**
 * Express 4 keeps the path of `app.use(path, …)` only compiled: `layer.regexp` (path-to-regexp
 * 0.1, options `{ end: false, strict: false }`) and the parameter names in `layer.keys`. This reads
 * the path back from the regexp and keeps it only if compiling it again with the application's own
 * `Layer` gives the very same regexp; otherwise (a RegExp the application passed, or a form not read
 * here) the regexp stands for the path, shown as written.
 */

/** What of an Express 4 router layer this reads. */
export interface Express4Layer {
  readonly regexp: RegExp & { fast_slash?: boolean; fast_star?: boolean };
  readonly keys: readonly { readonly name: string | number }[];
  readonly constructor: new (path: unknown, options: object, fn: () => void) => { regexp: RegExp };
}

const SUFFIX = '\\/?(?=\\/|$)';
const PARAM = /^(\\\.)?(\\\/)?\((.*)\)$/s;

/** The path `layer` was mounted at, as written (a string, or several), or its RegExp. */
export function express4MountPath(layer: Express4Layer): string | string[] | RegExp {
  const { regexp } = layer;
  if (regexp.fast_slash === true) return '/';
  if (regexp.fast_star === true) return '*';
  const keys = [...layer.keys];
  const paths = regexp.source.split(/\|(?=\^)/).map((alternative) => pathOf(alternative, keys));
  if (keys.length > 0 || !paths.every((p) => p !== undefined)) return regexp;
  const path = paths.length === 1 ? paths[0] as string : paths;
  const again = new layer.constructor(path, { sensitive: !regexp.flags.includes('i'), strict: false, end: false }, function audit() {}).regexp;
  return again.source === regexp.source && again.flags === regexp.flags ? path : regexp;
}

function pathOf(source: string, keys: { readonly name: string | number }[]): string | undefined {
  if (!source.startsWith('^') || !source.endsWith(SUFFIX)) return undefined;
  const body = source.slice(1, -SUFFIX.length);
  let path = '';
  for (let i = 0; i < body.length;) {
    const c = body[i] as string;
    if (c === '\\') {
      const escaped = body[i + 1] ?? '';
      path += escaped === '/' || escaped === '.' ? escaped : `\\${escaped}`;
      i += 2;
    } else if (body.startsWith('(.*)', i) && keys.shift() !== undefined) {
      path += '*';
      i += 4;
    } else if (body.startsWith('(?:', i)) {
      const end = closing(body, i);
      const param = end < 0 ? undefined : paramOf(body.slice(i + 3, end), keys.shift());
      if (param === undefined) return undefined;
      const optional = body[end + 1] === '?';
      path += optional ? `${param}?` : param;
      i = end + (optional ? 2 : 1);
    } else if ('()[]{}|?*+^$'.includes(c)) return undefined;
    else path += body[i++] as string;
  }
  return path;
}

/** `(?:[\.][\/](capture))` back to `[/][.]:name[(pattern)]`. */
function paramOf(inner: string, key: { readonly name: string | number } | undefined): string | undefined {
  const m = PARAM.exec(inner);
  if (m === null || typeof key?.name !== 'string') return undefined;
  const [, format, slash, capture = ''] = m;
  const plain = capture === '[^/]+?' || capture === '[^/\\.]+?' || /^\(\?:\(\?!.*\)\.\)\+\?$/s.test(capture);
  return `${slash ? '/' : ''}${format ? '.' : ''}:${key.name}${plain ? '' : `(${capture})`}`;
}

/** The index of the parenthesis closing the one at `start`. */
function closing(source: string, start: number): number {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') {
      while (i + 1 < source.length && source[++i] !== ']') if (source[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}
