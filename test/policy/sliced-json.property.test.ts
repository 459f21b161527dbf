/**
 * The sliced JSON parser that large policy bodies go through: for any JSON text (any value, any
 * whitespace), and any mutation of one, it gives what `JSON.parse` gives — the same value, or a
 * refusal — whatever the piece size; and it hands the event loop back as it goes.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeUtf8Sliced, JsonSyntaxError, MAX_SPLIT_DEPTH, parseJsonSliced } from '../../src/lib/sliced-json.js';

const immediate = (): Promise<void> => Promise.resolve();

/** JSON text with random whitespace between tokens. */
const spacedJson = fc.tuple(fc.jsonValue({ maxDepth: 5 }), fc.array(fc.constantFrom('', ' ', '\n', '\t ', '\r\n  '), { minLength: 1, maxLength: 8 }))
  .map(([value, spaces]) => {
    let n = 0;
    const text = JSON.stringify(value, null, 1);
    // Re-space outside strings only: JSON.stringify's indentation lines start with spaces.
    return text.replace(/\n +/g, () => `\n${spaces[n++ % spaces.length] ?? ''}`);
  });

async function outcome(text: string, pieceChars: number, charsPerTurn: number): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: await parseJsonSliced(text, { pieceChars, charsPerTurn, yieldTurn: immediate }) };
  } catch (error) {
    expect(error).toBeInstanceOf(SyntaxError);
    return { ok: false };
  }
}

function expected(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

describe('parseJsonSliced', () => {
  test('parses any JSON text as JSON.parse does, whatever the piece size', async () => {
    await fc.assert(fc.asyncProperty(spacedJson, fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 200 }), async (text, piece, perTurn) => {
      expect(await outcome(text, piece, perTurn)).toStrictEqual(expected(text));
    }), { numRuns: 400 });
  });

  test('refuses what JSON.parse refuses: mutated, truncated and padded texts', async () => {
    const noise = fc.constantFrom(',', ']', '}', '[', '{', '"', ':', '\\', ' ', 'x', '1', ',]', '[,', '"\\"', '\u0000');
    const mutated = fc.tuple(spacedJson, fc.nat(), fc.nat({ max: 3 }), noise).map(([text, at, cut, insert]) => {
      const pos = text.length === 0 ? 0 : at % text.length;
      return text.slice(0, pos) + insert + text.slice(pos + cut);
    });
    await fc.assert(fc.asyncProperty(mutated, fc.integer({ min: 1, max: 32 }), async (text, piece) => {
      expect(await outcome(text, piece, 50)).toStrictEqual(expected(text));
    }), { numRuns: 1500 });
  });

  test.each([
    ['a trailing comma after a split', '[1,2,3,4,5,6,7,8,]'],
    ['a leading comma', '[,1,2,3,4,5,6,7,8]'],
    ['two commas', '[1,2,3,4,,5,6,7,8]'],
    ['a comma after an entered member', '[[1,2,3,4,5,6,7,8,9],]'],
    ['a mismatched close of an entered member', '[[1,2,3,4,5,6,7,8,9}]'],
    ['text after the document', '[1,2,3,4,5,6,7,8] x'],
    ['a missing colon in an entered member', '{"a" [1,2,3,4,5,6,7,8,9]}'],
    ['an unterminated string', '["1234567890'],
  ])('refuses %s', async (_name, text) => {
    expect(expected(text)).toStrictEqual({ ok: false });
    await expect(parseJsonSliced(text, { pieceChars: 4, yieldTurn: immediate })).rejects.toThrow(SyntaxError);
  });

  test(`refuses large containers nested deeper than MAX_SPLIT_DEPTH (${MAX_SPLIT_DEPTH}), the one departure from JSON.parse`, async () => {
    const nest = (depth: number): string => `${'['.repeat(depth)}${'1,'.repeat(50)}1${']'.repeat(depth)}`;
    const deep = nest(MAX_SPLIT_DEPTH + 1);
    expect(expected(deep).ok).toBe(true);
    await expect(parseJsonSliced(deep, { pieceChars: 4, yieldTurn: immediate })).rejects.toThrow(JsonSyntaxError);
    expect(await parseJsonSliced(nest(MAX_SPLIT_DEPTH - 1), { pieceChars: 4, yieldTurn: immediate })).toStrictEqual(JSON.parse(nest(MAX_SPLIT_DEPTH - 1)));
    // Containers smaller than a piece nest as deep as JSON.parse allows: they are parsed whole.
    const smallDeep = `[${nest(2000)}${',0'.repeat(40_000)}]`;
    expect(await parseJsonSliced(smallDeep, { yieldTurn: immediate })).toStrictEqual(JSON.parse(smallDeep));
  });

  test('keeps "__proto__" an own member, as JSON.parse does', async () => {
    const text = '{"__proto__":{"polluted":true},"a":[1,2,3,4,5,6,7,8,9],"__proto__x":1}';
    const value = await parseJsonSliced(text, { pieceChars: 4, yieldTurn: immediate }) as Record<string, unknown>;
    expect(value).toStrictEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toContain('__proto__');
  });

  test('hands the event loop back between slices of a large text', async () => {
    const text = JSON.stringify({ roles: [{ key: 'R', servicePolicies: [{ serviceDefinitionKey: 's', permissions: Array.from({ length: 20_000 }, (_, i) => ({ key: `P${i}` })) }] }] });
    let turns = 0;
    const value = await parseJsonSliced(text, { charsPerTurn: 10_000, pieceChars: 1_000, yieldTurn: () => { turns += 1; return Promise.resolve(); } });
    expect(value).toStrictEqual(JSON.parse(text));
    expect(turns).toBeGreaterThanOrEqual(Math.floor(text.length / 10_000) - 1);
  });

  test('decodeUtf8Sliced decodes as Buffer#toString, also across slice boundaries and with a BOM', async () => {
    const text = `\ufeff${'é€😀'.repeat(400_000)}`;
    const bytes = Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from([0xff, 0xc3])]);
    expect(await decodeUtf8Sliced(bytes, immediate)).toBe(bytes.toString('utf8'));
  });
});
