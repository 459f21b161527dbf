/**
 * `JSON.parse` of large bodies without holding the event loop. One `JSON.parse` call cannot be
 * interrupted (4 MiB of a one-role policy takes 60–170 ms on two cores), so a large document is cut
 * into pieces that `JSON.parse` can take quickly: a scan (which only tracks strings and bracket
 * depth) finds the members of each large array or object, runs of them of about
 * {@link JSON_PIECE_CHARS} are parsed as one small array or object, and a member that is itself
 * large is entered the same way. Every piece is checked by `JSON.parse` itself and the commas and
 * brackets between pieces by the scan, so the result, and what is refused, are those of
 * `JSON.parse` — except that a document whose large containers nest deeper than
 * {@link MAX_SPLIT_DEPTH} is refused.
 */

/** Largest run of members handed to one `JSON.parse` call (characters). */
export const JSON_PIECE_CHARS = 32_768;
/** Characters scanned or parsed between two turns of the event loop. */
export const JSON_CHARS_PER_TURN = 131_072;
/** Most nested containers entered (each larger than {@link JSON_PIECE_CHARS}); a role policy needs 4. */
export const MAX_SPLIT_DEPTH = 32;

/** Why a document is not JSON: the index of the fault in the text, when known. No text is quoted. */
export class JsonSyntaxError extends SyntaxError {
  readonly position: number | undefined;
  constructor(message: string, position: number | undefined) {
    super(position === undefined ? message : `${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
    this.position = position;
  }
}

/** One turn of the event loop (after I/O), for the default `yieldTurn`. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

interface Frame {
  /** `]` or `}`. */
  readonly close: number;
  readonly value: unknown[] | Record<string, unknown>;
  /** Where this container goes in its parent object (`undefined` in an array or at the top). */
  readonly key: string | undefined;
  /** Start of the members not parsed yet. */
  segStart: number;
  /** Start of the member being scanned (just after the last comma at depth 0). */
  memberStart: number;
  /** The last thing consumed was a comma: the next run of members must not be empty. */
  afterComma: boolean;
}

/** Tuning of {@link parseJsonSliced} (tests use small sizes to exercise the splitting). */
export interface SliceOptions {
  /** Hands the event loop back; default {@link nextTurn}. */
  yieldTurn?: () => Promise<void>;
  /** Default {@link JSON_PIECE_CHARS}. */
  pieceChars?: number;
  /** Default {@link JSON_CHARS_PER_TURN}. */
  charsPerTurn?: number;
}

/**
 * Parses `text` as `JSON.parse` does (no reviver), handing the event loop back (`yieldTurn`) every
 * {@link JSON_CHARS_PER_TURN} characters of work. Text up to {@link JSON_PIECE_CHARS} characters,
 * or whose top-level value is not an array or object, is parsed in one call. Rejects with a
 * {@link JsonSyntaxError} (or the `SyntaxError` of `JSON.parse`) when `text` is not JSON.
 */
export async function parseJsonSliced(text: string, options: SliceOptions = {}): Promise<unknown> {
  const { yieldTurn = nextTurn, pieceChars = JSON_PIECE_CHARS, charsPerTurn = JSON_CHARS_PER_TURN } = options;
  const n = text.length;
  let i = skipWs(text, 0);
  const first = text.charCodeAt(i);
  if (n <= pieceChars || (first !== OPEN_ARRAY && first !== OPEN_OBJECT)) return JSON.parse(text) as unknown;
  const stack: Frame[] = [frame(first, undefined, i + 1)];
  i += 1;
  let depth = 0;
  let work = 0;
  for (;;) {
    if (work >= charsPerTurn) {
      await yieldTurn();
      work = 0;
    }
    const top = stack[stack.length - 1] as Frame;
    if (i >= n) throw new JsonSyntaxError('unexpected end of JSON input', n);
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      const end = stringEnd(text, i);
      work += end - i;
      i = end + 1;
    } else if (ch === OPEN_ARRAY || ch === OPEN_OBJECT) {
      depth += 1;
      i += 1;
    } else if (ch === CLOSE_ARRAY || ch === CLOSE_OBJECT) {
      if (depth > 0) {
        depth -= 1;
        i += 1;
      } else {
        if (ch !== top.close) throw new JsonSyntaxError('mismatched bracket', i);
        work += flush(text, top, top.segStart, i, top.afterComma);
        stack.pop();
        i += 1;
        const parent = stack[stack.length - 1];
        if (parent === undefined) {
          if (skipWs(text, i) !== n) throw new JsonSyntaxError('unexpected text after JSON', skipWs(text, i));
          return top.value;
        }
        attach(parent, top.key, top.value);
        i = skipWs(text, i);
        const next = text.charCodeAt(i);
        if (next === COMMA) {
          i += 1;
          parent.afterComma = true;
        } else if (next === parent.close) {
          parent.afterComma = false;
        } else {
          throw new JsonSyntaxError('expected , or a closing bracket', i);
        }
        parent.segStart = i;
        parent.memberStart = i;
        continue;
      }
    } else if (ch === COMMA && depth === 0) {
      if (i - top.segStart >= pieceChars) {
        work += flush(text, top, top.segStart, i, true);
        top.segStart = i + 1;
        top.afterComma = true;
      }
      i += 1;
      top.memberStart = i;
    } else {
      i += 1;
    }
    work += 1;
    if (depth > 0 && i - top.memberStart > pieceChars) {
      // The member being scanned is large: parse the members before it, then enter it.
      if (top.memberStart > top.segStart) {
        work += flush(text, top, top.segStart, top.memberStart - 1, true);
        top.afterComma = true;
      }
      if (stack.length >= MAX_SPLIT_DEPTH) throw new JsonSyntaxError(`large containers nested deeper than ${MAX_SPLIT_DEPTH}`, top.memberStart);
      let j = skipWs(text, top.memberStart);
      let key: string | undefined;
      if (top.close === CLOSE_OBJECT) {
        if (text.charCodeAt(j) !== QUOTE) throw new JsonSyntaxError('expected a property name', j);
        const keyEnd = stringEnd(text, j);
        key = parsePiece(text.slice(j, keyEnd + 1), j) as string;
        j = skipWs(text, keyEnd + 1);
        if (text.charCodeAt(j) !== COLON) throw new JsonSyntaxError('expected :', j);
        j = skipWs(text, j + 1);
      }
      const open = text.charCodeAt(j);
      if (open !== OPEN_ARRAY && open !== OPEN_OBJECT) throw new JsonSyntaxError('unexpected character', j);
      work += j - top.memberStart;
      stack.push(frame(open, key, j + 1));
      i = j + 1;
      depth = 0;
    }
  }
}

function frame(open: number, key: string | undefined, start: number): Frame {
  return open === OPEN_ARRAY
    ? { close: CLOSE_ARRAY, value: [], key, segStart: start, memberStart: start, afterComma: false }
    : { close: CLOSE_OBJECT, value: {}, key, segStart: start, memberStart: start, afterComma: false };
}

/**
 * Parses the members in `text[from, to)` into `top`; returns the work done. An empty run is an
 * error when `mustHaveMembers` (it follows or precedes a comma: `[1,]`, `[,1]`, `[1,,2]`).
 */
function flush(text: string, top: Frame, from: number, to: number, mustHaveMembers: boolean): number {
  const array = top.close === CLOSE_ARRAY;
  const parsed = parsePiece(`${array ? '[' : '{'}${text.slice(from, to)}${array ? ']' : '}'}`, from - 1);
  if (array) {
    const items = parsed as unknown[];
    if (mustHaveMembers && items.length === 0) throw new JsonSyntaxError('unexpected ,', from);
    const target = top.value as unknown[];
    for (const item of items) target.push(item);
  } else {
    const members = parsed as Record<string, unknown>;
    const keys = Object.keys(members);
    if (mustHaveMembers && keys.length === 0) throw new JsonSyntaxError('unexpected ,', from);
    for (const key of keys) attach(top, key, members[key]);
  }
  return to - from;
}

/** Adds a member as `JSON.parse` would: an own data property, also for `__proto__`. */
function attach(parent: Frame, key: string | undefined, value: unknown): void {
  if (Array.isArray(parent.value)) parent.value.push(value);
  else Object.defineProperty(parent.value, key as string, { value, writable: true, enumerable: true, configurable: true });
}

/** `JSON.parse(piece)`; a fault is reported at its place in the whole text (`offset` + index). */
function parsePiece(piece: string, offset: number): unknown {
  try {
    return JSON.parse(piece) as unknown;
  } catch (error) {
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    throw new JsonSyntaxError('invalid JSON', at === undefined ? undefined : Math.max(0, offset + Number(at)));
  }
}

/** Index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) throw new JsonSyntaxError('unterminated string', start);
    let b = j - 1;
    while (text.charCodeAt(b) === BACKSLASH) b -= 1;
    if ((j - 1 - b) % 2 === 0) return j;
  }
}

/** Index of the first character at or after `i` that is not JSON whitespace. */
function skipWs(text: string, i: number): number {
  let j = i;
  for (;;) {
    const c = text.charCodeAt(j);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return j;
    j += 1;
  }
}

/** Bytes decoded or hashed between two turns of the event loop. */
export const BYTES_PER_TURN = 1_048_576;

/**
 * `body.toString('utf8')` (invalid sequences become U+FFFD, a BOM is kept), one
 * {@link BYTES_PER_TURN} slice per turn of the event loop.
 */
export async function decodeUtf8Sliced(body: Uint8Array, yieldTurn: () => Promise<void> = nextTurn): Promise<string> {
  if (body.length <= BYTES_PER_TURN) return Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8');
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const parts: string[] = [];
  for (let at = 0; at < body.length; at += BYTES_PER_TURN) {
    if (at > 0) await yieldTurn();
    parts.push(decoder.decode(body.subarray(at, at + BYTES_PER_TURN), { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}
