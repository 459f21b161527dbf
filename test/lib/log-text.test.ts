/**
 * The one escaping rule of log text, over arbitrary strings (fast-check): no code point that could
 * break or disguise a log line survives, printable ASCII is unchanged, escaping twice changes
 * nothing; and the sinks: `createLog` and the console logger never pass a raw line break on, while
 * the structured fields keep the raw value.
 */
import fc from 'fast-check';
import { afterEach, expect, test, vi } from 'vitest';
import { escapeForLog, forLog, LOG_VALUE_MAX_CHARS, quotedForLog, singleQuotedForLog } from '../../src/lib/log-text.js';
import { consoleLogger, createLog, type Logger, type LogFields } from '../../src/lib/logger.js';
import { Clock } from '../helpers/clock.js';

// eslint-disable-next-line no-control-regex -- the characters a forged log line is made of
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]/u;
const TRICKS = ['\n', '\r', '\u001b', '\u0000', '\u007f', '\u0085', '\u009b', '\u2028', '\u2029', '\u202e', '\u2066', '\u200f', '\u061c', '\ud800', '\udfff', '\\', '\'', '"', 'iam-authz warn: '];
/** Any string: every UTF-16 code unit (lone surrogates included), any code point, and the tricks often. */
const anyText = fc.string({
  unit: fc.oneof(fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom(...TRICKS)),
  maxLength: 400,
});
const printableAscii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });

afterEach(() => {
  vi.restoreAllMocks();
});

test('escapeForLog: nothing forbidden comes out, printable ASCII is unchanged, twice is once', () => {
  fc.assert(fc.property(anyText, (text) => {
    const escaped = escapeForLog(text);
    expect(FORBIDDEN.exec(escaped)).toBeNull();
    expect(escapeForLog(escaped)).toBe(escaped);
  }), { numRuns: 2_000 });
  fc.assert(fc.property(printableAscii, (text) => { expect(escapeForLog(text)).toBe(text); }));
  expect(escapeForLog('a\nb\r\u001b[2K\u0085\u2028\u202e\ud83d\ude00')).toBe('a\\u000ab\\u000d\\u001b[2K\\u0085\\u2028\\u202e\ud83d\ude00');
});

test('forLog, quotedForLog and singleQuotedForLog: clean, cut, and the quoted form reads back as JSON', () => {
  fc.assert(fc.property(anyText, (text) => {
    const cutText = text.length > LOG_VALUE_MAX_CHARS ? `${text.slice(0, LOG_VALUE_MAX_CHARS)}…` : text;
    for (const shown of [forLog(text), quotedForLog(text), singleQuotedForLog(text)]) expect(FORBIDDEN.exec(shown)).toBeNull();
    expect(forLog(text)).toBe(escapeForLog(cutText));
    expect(JSON.parse(quotedForLog(text))).toBe(cutText);
    expect(singleQuotedForLog(text).slice(1, -1)).not.toContain('\'');
  }), { numRuns: 1_000 });
});

function capturing(): { logger: Logger; calls: { fields: LogFields; message: string }[] } {
  const calls: { fields: LogFields; message: string }[] = [];
  const at = (fields: LogFields, message: string): void => { calls.push({ fields, message }); };
  return { logger: { debug: at, info: at, warn: at, error: at }, calls };
}

test('createLog: the message handed to the logger holds no raw control character; the fields hold the raw value', () => {
  fc.assert(fc.property(anyText, (text) => {
    const { logger, calls } = capturing();
    const log = createLog(logger, new Clock().now);
    log.debug({ event: 'e', value: text }, `refused: ${text}`);
    log.warn(text, { event: 'e', value: text }, `failed: ${text}`);
    expect(calls).toHaveLength(2);
    for (const { fields, message } of calls) {
      expect(FORBIDDEN.exec(message)).toBeNull();
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the fields' own toString, which winston prints
      expect(String(fields)).toBe(message);
      expect(fields['value']).toBe(text);
    }
  }), { numRuns: 500 });
});

test('the console logger writes one line per call, whatever the message holds', () => {
  const written: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => { written.push(args.map(String).join(' ')); });
  for (const level of ['debug', 'info', 'warn', 'error'] as const) consoleLogger[level]({ event: 'e' }, 'x\niam-authz warn: forged\r\u0085\u2028');
  expect(written).toStrictEqual(['debug', 'info', 'warn', 'error'].map((level) => `iam-authz ${level}: x\\u000aiam-authz warn: forged\\u000d\\u0085\\u2028`));
});
