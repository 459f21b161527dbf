/** The `iam-authz` command, run as a real process against a real development IAM. */
import { execFile, execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDevIam, type DevIam, type DevIamConfig } from '../../src/index.js';
import { describeToken, relative } from '../../src/cli/decode.js';
import { readStdinToken } from '../../src/cli/terminal.js';
import { runCli, type CliRun } from '../support.js';

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const root = fileURLToPath(new URL('../..', import.meta.url));
let iam: DevIam;
let alice: string;

function cli(...args: string[]): Promise<CliRun> {
  return runCli(args);
}

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => { await iam.close(); });

test('decode prints header, claims, ars and expiry, and says it did not verify', () => {
  const nowMs = Date.now();
  const out = describeToken(alice, nowMs);
  expect(out).toMatch(/^NOT VERIFIED/);
  expect(out).toContain('"actor-alice"');
  expect(out).toMatch(/1\s+DRIVER\s+VIN=WVW1/);
  expect(out).toMatch(/expires in 60 minutes/);
  const expired = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(nowMs / 1000) - 7200 } });
  expect(describeToken(expired, nowMs)).toMatch(/EXPIRED 2 hours ago/);
  expect(() => describeToken('nope', nowMs)).toThrow(/compact JWS/);
  // A payload 100,000 levels deep is refused with a message, not a RangeError from printing it.
  const deep = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(`{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`).toString('base64url')}.c2ln`;
  expect(() => describeToken(deep, nowMs)).toThrow(/nested deeper than 32 levels/);
  expect(relative(-1000)).toBe('1 second ago');
  expect(relative(3 * 86_400_000)).toBe('in 3 days');
});

test('explain: granted exits 0, denied exits 3 with the reason, bad token exits 1', async () => {
  const base = ['explain', '--token', alice, '--service', 'vehicle-service', '--resource', 'VIN=WVW1', '--iam', iam.baseUrl];
  const [read, write, bad] = await Promise.all([
    cli(...base, '--permission', 'READ'),
    cli(...base, '--permission', 'WRITE'),
    cli('explain', '--token', 'a.b.c', '--service', 's', '--permission', 'p', '--resource', 'VIN=1', '--iam', iam.baseUrl),
  ]);
  expect(read.code).toBe(0);
  expect(read.stdout).toContain('GRANTED');
  expect(write.code).toBe(3);
  expect(write.stdout).toContain('PERMISSION_NOT_GRANTED');
  expect(write.stdout).toMatch(/^held {5}READ \(DRIVER\)$/m); // what the token does hold there
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('ERR_TOKEN_INVALID');
});

test('usage errors exit 2 and print help; --help for each command', async () => {
  const commands = ['dev-server', 'token', 'decode', 'explain'];
  const [missing, unknown, ...helps] = await Promise.all([cli('explain', '--token', alice), cli('nope'), ...commands.map((c) => cli(c, '--help'))]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('usage: iam-authz explain');
  expect(unknown.code).toBe(2);
  helps.forEach((help, i) => {
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`usage: iam-authz ${commands[i]!}`);
  });
});

test('--version prints the package version and exits 0', async () => {
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const out = await cli(flag);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(version);
  }
});

describe('text from a token never reaches the terminal raw', () => {
  // An OSC title change ending in BEL, a C1 CSI (ESC [ to many terminals), a carriage return that
  // lets a line overwrite itself, DEL, a right-to-left override and a line separator.
  const OSC = '\u001b]0;pwned\u0007';
  const CSI = '\u009b31m';
  const hostile = `${OSC}${CSI}\r\u007f\u202e\u2028`;
  /** Any code point of the escaped set, except the line feeds the CLI itself writes. */
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;
  const expectClean = (out: CliRun) => {
    expect(out.stdout + out.stderr).not.toMatch(UNSAFE);
    for (const byte of [0x1b, 0x07, 0x0d, 0x7f]) expect(out.raw.includes(byte)).toBe(false);
    expect(out.raw.includes(Buffer.from('\u009b'))).toBe(false); // C2 9B
  };

  test('decode escapes header and claim keys and values and the ars table', async () => {
    const token = iam.mintToken({
      actor: 'actor-alice',
      tenantId: 'tenant-1',
      claims: { sub: `alice${OSC}`, note: hostile, [`key${OSC}`]: [CSI], obj: { [CSI]: '\r' } },
      ars: [{ r: [`DRIVER${CSI}`], c: [`VIN=WVW1\r${OSC}`], n: ['node\\u001b'] }],
      header: { [`x${CSI}`]: OSC },
    });
    const out = await runCli(['decode', token]);
    expect(out.code).toBe(0);
    expectClean(out);
    expect(out.stdout).toContain('"alice\\u001b]0;pwned\\u0007"');
    expect(out.stdout).toContain('"\\u001b]0;pwned\\u0007\\u009b31m\\r\\u007f\\u202e\\u2028"');
    expect(out.stdout).toMatch(/^ {2}key\\u001b\]0;pwned\\u0007 \["\\u009b31m"\]$/m);
    expect(out.stdout).toContain('{"\\u009b31m":"\\r"}');
    expect(out.stdout).toMatch(/^ {2}x\\u009b31m "\\u001b\]0;pwned\\u0007"$/m);
    // The table: roles and references escaped; a literal backslash is doubled, so it is told apart.
    expect(out.stdout).toMatch(/^ {2}1 +DRIVER\\u009b31m +VIN=WVW1\\u000d\\u001b\]0;pwned\\u0007 +node\\\\u001b$/m);
  });

  test('explain escapes the verified claims and roles it prints, and the messages of a refusal', async () => {
    const token = iam.mintToken({
      actor: 'actor-alice',
      tenantId: 'tenant-1',
      claims: { sub: `alice${OSC}\r` },
      ars: [{ r: ['DRIVER', `ghost${CSI}\u202e`], c: ['VIN=WVW1'] }],
    });
    const granted = await runCli(['explain', '--token', token, '--service', 'vehicle-service', '--permission', 'READ', '--resource', 'VIN=WVW1', '--iam', iam.baseUrl]);
    expect(granted.code).toBe(0);
    expectClean(granted);
    expect(granted.stdout).toContain('sub alice\\u001b]0;pwned\\u0007\\u000d,');
    expect(granted.stdout).toMatch(/^roles {4}(DRIVER, ghost\\u009b31m\\u202e|ghost\\u009b31m\\u202e, DRIVER)$/m);

    const wrongIssuer = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { iss: `http://evil${CSI}\r${OSC}` } });
    const refused = await runCli(['explain', '--token', wrongIssuer, '--service', 'vehicle-service', '--permission', 'READ', '--resource', 'VIN=WVW1', '--iam', iam.baseUrl]);
    expect(refused.code).toBe(1);
    expectClean(refused);
    expect(refused.stderr).toContain('http://evil\\u009b31m\\r\\u001b]0;pwned\\u0007');
  });

  test('arguments quoted in a usage error are escaped too', async () => {
    const out = await runCli([`no${OSC}pe`]);
    expect(out.code).toBe(2);
    expectClean(out);
    expect(out.stderr).toContain('unknown command "no\\u001b]0;pwned\\u0007pe"');
  });
});

describe('explain reads the token from stdin or IAM_AUTHZ_TOKEN, and never prints it', () => {
  const rest = ['--service', 'vehicle-service', '--permission', 'READ', '--resource', 'VIN=WVW1'];
  const args = () => [...rest, '--iam', iam.baseUrl];

  test('--token - reads stdin (trimmed, "Bearer " dropped)', async () => {
    const out = await runCli(['explain', '--token', '-', ...args()], { input: `  Bearer ${alice}\n` });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('GRANTED');
  });

  test('without --token: IAM_AUTHZ_TOKEN first (stdin is not read), else stdin', async () => {
    const [fromEnv, fromStdin, explicit] = await Promise.all([
      runCli(['explain', ...args()], { env: { IAM_AUTHZ_TOKEN: alice }, input: '' }),
      runCli(['explain', ...args()], { input: alice }),
      // --token wins over the variable.
      runCli(['explain', '--token', alice, ...args()], { env: { IAM_AUTHZ_TOKEN: 'a.b.c' } }),
    ]);
    for (const out of [fromEnv, fromStdin, explicit]) {
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
    }
  });

  test('an empty stdin is a usage error that says a token was expected there', async () => {
    const [dash, none] = await Promise.all([runCli(['explain', '--token', '-', ...args()], { input: '' }), runCli(['explain', ...args()], { input: ' \n' })]);
    for (const out of [dash, none]) {
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('expected a token on stdin, but stdin was empty');
    }
  });

  test('more than 64 KiB on stdin is refused, unechoed', async () => {
    const big = `${alice}${'A'.repeat(70_000)}`;
    const out = await runCli(['explain', '--token', '-', ...args()], { input: big });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('stdin holds more than 65536 bytes');
    expect(out.stdout + out.stderr).not.toContain(alice.slice(0, 20));
  });

  test('usage errors come before stdin is read (no hang on an open stdin)', async () => {
    const out = await runCli(['explain', '--service', 'vehicle-service']); // stdin left open
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--permission is required');
  });

  test('a refused token is not echoed: not from stdin, not from a stray positional argument', async () => {
    const [header, payload] = alice.split('.');
    const forged = `${header!}.${payload!}.${Buffer.from('forged-signature-forged-signature').toString('base64url')}`;
    const [refused, stray] = await Promise.all([
      runCli(['explain', '--token', '-', ...args()], { input: forged }),
      runCli(['explain', forged, ...args()]),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ERR_TOKEN_INVALID');
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('unexpected argument (not shown');
    for (const out of [refused, stray]) {
      expect(out.stdout + out.stderr).not.toContain(payload!);
      expect(out.stdout + out.stderr).not.toContain(forged.split('.')[2]!);
    }
  });
});

describe('decode - reads the token from stdin', () => {
  test('a piped token is decoded', async () => {
    const out = await runCli(['decode', '-'], { input: `Bearer ${alice}\n` });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('"actor-alice"');
  });

  test('an empty stdin says a token was expected there', async () => {
    const out = await runCli(['decode', '-'], { input: '' });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('iam-authz decode: expected a token on stdin, but stdin was empty');
  });

  test('a terminal on stdin is refused at once, not waited on', async () => {
    await expect(readStdinToken({ isTTY: true, [Symbol.asyncIterator]: () => { throw new Error('read'); } })).rejects.toThrow(/expected a token on stdin, but stdin is a terminal/);
  });

  // A real terminal: util-linux `script` runs the CLI on a pseudo-terminal.
  test.runIf(hasScript)('on a real terminal: the same message, exit 2', async () => {
    const command = [process.execPath, '--import', 'tsx', 'src/cli/main.ts', 'decode', '-'].map((a) => `'${a}'`).join(' ');
    const out = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile('script', ['-qec', command, '/dev/null'], { cwd: root, timeout: 30_000 }, (error, stdout) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout });
      });
    });
    expect(out.stdout).toContain('expected a token on stdin, but stdin is a terminal');
    expect(out.code).toBe(2);
  });
});
