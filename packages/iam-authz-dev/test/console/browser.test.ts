/**
 * The console in a real browser: Debian's chromium, driven by playwright-core (no browser download).
 * The example vehicle-service runs against the same development IAM, so a grant made in the matrix
 * is observed where it matters. Screenshots of each view go to test-artifacts/console/.
 *
 * Without a chromium executable the suite is skipped with a message — except under CI=true, where
 * `.ci/run` installs it and a missing browser is a failure.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import { startExpress } from '../../../../examples/vehicle-service/express.js';
import type { RunningService } from '../../../../examples/vehicle-service/store.js';
import { exampleConfig, startConsoleEnv, type ConsoleEnv } from './support.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p !== undefined && p !== '' && existsSync(p));
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

if (CHROMIUM === undefined && !IN_CI) {
  console.warn('console browser tests SKIPPED: no chromium at /usr/bin/chromium (install it: apt-get install -y chromium, or set CHROMIUM_PATH)');
}

describe.runIf(CHROMIUM === undefined && IN_CI)('console in a browser (CI)', () => {
  it('needs chromium, which .ci/run installs', () => {
    throw new Error('CI=true but no chromium executable was found; .ci/run should have installed Debian\'s chromium package');
  });
});

describe.skipIf(CHROMIUM === undefined)(`console in a browser${CHROMIUM === undefined ? ' (SKIPPED: no chromium found)' : ''}`, () => {
  let env: ConsoleEnv | undefined;
  let service: RunningService | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let aliceToken: string;
  const problems: string[] = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    const started = await startConsoleEnv();
    env = started;
    // The example service as `npm start` runs it; a denial refetches the policy at once (no 5 s spacing), to keep the test short.
    service = await startExpress(createAuthorizer({ baseUrl: started.iam.baseUrl, policy: { minRefreshIntervalMs: 0 } }), 0);
    aliceToken = started.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    // Root in a container needs --no-sandbox.
    const launched = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
    browser = launched;
    context = await launched.newContext({ viewport: { width: 1280, height: 860 } });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await env?.close();
  });

  async function openConsole(): Promise<Page> {
    const page = await context.newPage();
    // 4xx answers the page expects (409, 400 while validating) are logged by Chrome as resource errors; anything else is a problem.
    page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
    page.on('pageerror', (e) => { problems.push(e.message); });
    await page.goto(`${env!.iam.baseUrl}/console`);
    await page.waitForSelector('body[data-ready="true"]');
    return page;
  }

  const shot = async (page: Page, name: string) => {
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  };

  const putVehicle = async () => (await fetch(`${service!.url}/vehicle/WVW1`, {
    method: 'PUT', headers: { authorization: `Bearer ${aliceToken}`, 'content-type': 'application/json' }, body: '{"color":"red"}',
  })).status;

  /** Every control of the current view has an accessible name (a label, aria-label or text). */
  // (Browser-side code as a string: the test program has no DOM types.)
  const unlabelled = (page: Page) => page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((el) => !(el.labels && el.labels.length > 0) && !el.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent.trim() !== ''))
    .map((el) => el.outerHTML.slice(0, 120))`);

  it('grant WRITE to DRIVER in the matrix: the running vehicle-service then lets alice PUT', async () => {
    expect(await putVehicle()).toBe(403);
    const page = await openConsole();
    expect(await page.locator('#storage').textContent()).toContain(env!.file!);
    const changeIdBefore = await page.locator('#changeid').textContent();
    expect(changeIdBefore).toBe(env!.iam.policyOf('app-1')!.changeId);
    await shot(page, 'roles');

    // By keyboard: focus the cell, Space toggles it.
    const cell = page.getByLabel('DRIVER may WRITE on vehicle-service');
    await cell.focus();
    await page.keyboard.press('Space');
    await expect.poll(() => cell.isChecked()).toBe(true);
    await expect.poll(() => page.locator('#dirty').textContent()).toContain('Unsaved changes');
    await page.locator('#save').click();
    await page.locator('#message').getByText('Saved to the config file.').waitFor();
    await shot(page, 'roles-saved');

    expect(await putVehicle()).toBe(200);
    const changeIdAfter = await page.locator('#changeid').textContent();
    expect(changeIdAfter).not.toBe(changeIdBefore);
    expect(changeIdAfter).toBe(env!.iam.policyOf('app-1')!.changeId);
    await page.locator('details summary').click();
    expect(await page.locator('#changeid-history li').count()).toBe(2);
    // The README's picture: the matrix after the grant, with the changeId history open.
    await page.screenshot({ path: `${ARTIFACTS}readme.png`, clip: { x: 0, y: 0, width: 1280, height: 640 } });
    const saved = JSON.parse(await readFile(env!.file!, 'utf8'));
    expect(saved.applications[0].roles[0]).toStrictEqual({ key: 'DRIVER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } });
    expect(await unlabelled(page)).toStrictEqual([]);

    // Several applications: the picker switches the matrix.
    await page.locator('#app-select').selectOption('app-2');
    expect(await page.getByLabel('VIEWER may LIST on fleet-service').isChecked()).toBe(true);
    expect(await page.getByLabel('VIEWER may MANAGE on fleet-service').isChecked()).toBe(false);
    await page.close();
  }, 30_000);

  it('mint a token for alice, then explain a denial with the library\'s decision', async () => {
    const page = await openConsole();
    await page.locator('#tab-tokens').focus();
    await page.keyboard.press('Enter');
    await page.locator('#mint-actor').selectOption('actor-alice');
    await page.locator('#mint-tenant').selectOption('tenant-1');
    await page.locator('#mint-expiry').fill('600');
    await page.locator('#mint').click();
    await expect.poll(() => page.locator('#token-text').inputValue()).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    const token = await page.locator('#token-text').inputValue();
    expect(JSON.parse((await page.locator('#token-claims').textContent())!)).toMatchObject({ sub: 'actor-alice', tid: 'tenant-1', app: 'app-1' });
    expect(await page.locator('#token-ars').textContent()).toContain('VIN=WVW1');
    expect(await page.locator('#curl-line').textContent()).toBe(`curl -i -X 'GET' 'http://127.0.0.1:3000/vehicle/WVW1' -H 'Authorization: Bearer ${token}'`);
    expect(await unlabelled(page)).toStrictEqual([]);
    await shot(page, 'tokens');
    // The token is in the page, not in storage the page keeps (and the session cookie is HttpOnly).
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toStrictEqual([0, 0, '']);

    await page.locator('#to-explorer').click();
    expect(await page.locator('#explain-token').inputValue()).toBe(token);
    await page.locator('#explain-service').fill('vehicle-service');
    await page.locator('#explain-permission').fill('WRITE');
    await page.locator('#explain-resource').fill('VIN=WVW2');
    await page.locator('#explain').click();
    await expect.poll(() => page.locator('#verdict').textContent()).toBe('Denied: NO_MATCHING_REFERENCE');
    expect(await page.locator('#reason').textContent()).toContain('no access reference of the token names VIN=WVW2');
    await page.locator('#explain-permission').fill('DELETE');
    await page.locator('#explain-resource').fill('VIN=WVW1');
    await page.locator('#explain').click();
    await expect.poll(() => page.locator('#verdict').textContent()).toBe('Denied: PERMISSION_NOT_GRANTED');
    expect(await page.locator('#reason').textContent()).toBe('the roles DRIVER have permissions for vehicle-service, but not DELETE');
    await page.locator('#accessible-type').fill('VIN');
    await page.locator('#explain-permission').fill('WRITE');
    await page.locator('#accessible').click();
    await expect.poll(() => page.locator('#accessible-list').textContent()).toBe('VIN=WVW1 via DRIVER');
    expect(await unlabelled(page)).toStrictEqual([]);
    await shot(page, 'decisions');
    expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toStrictEqual([0, 0]);
    await page.close();
  }, 30_000);

  it('services and actors views: labelled, validated as you type', async () => {
    const page = await openConsole();
    await page.locator('#tab-services').click();
    expect(await page.locator('#svc-0-key').inputValue()).toBe('vehicle-service');
    expect(await unlabelled(page)).toStrictEqual([]);
    await shot(page, 'services');

    await page.locator('#tab-actors').click();
    expect(await unlabelled(page)).toStrictEqual([]);
    // A malformed reference is flagged at once, locally.
    const refs = page.locator('#actor-0-tenant-0-ref-0-c');
    await refs.fill('VINWVW1');
    expect(await refs.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#actor-0-tenant-0-ref-0-c-error').textContent()).toBe('"VINWVW1" is not TYPE=value');
    await refs.fill('VIN=WVW1');
    expect(await refs.getAttribute('aria-invalid')).toBeNull();
    // A duplicate actor id is caught by the server's validation, which names the field.
    await page.locator('#actor-1-id').fill('actor-alice');
    await expect.poll(() => page.locator('#dirty').textContent()).toContain('duplicate "actor-alice"');
    expect(await page.locator('#actor-1-id').getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'actors');
    await page.locator('#discard').click();
    expect(await page.locator('#actor-1-id').inputValue()).toBe('actor-bob');
    await page.close();
  }, 30_000);

  it('a save from a stale tab gets the 409 message, and Reload brings the tab up to date', async () => {
    const fresh = await openConsole();
    const stale = await openConsole();
    await fresh.getByLabel('OWNER may READ on vehicle-service').uncheck();
    await fresh.locator('#save').click();
    await fresh.locator('#message').getByText('Saved').waitFor();

    await stale.getByLabel('DRIVER may READ on vehicle-service').uncheck();
    await stale.locator('#save').click();
    const message = stale.locator('#message');
    await message.getByText('Not saved: the configuration was changed elsewhere').waitFor();
    expect(await message.getAttribute('class')).toBe('error');
    await shot(stale, 'stale-tab-409');
    // Nothing of the stale tab's change reached the file.
    const saved = JSON.parse(await readFile(env!.file!, 'utf8'));
    expect(saved.applications[0].roles.map((r: { permissions: Record<string, string[]> }) => r.permissions['vehicle-service'])).toStrictEqual([['READ', 'WRITE'], ['WRITE']]);

    await message.getByRole('button', { name: 'Reload' }).click();
    await expect.poll(() => message.isHidden()).toBe(true);
    expect(await stale.getByLabel('OWNER may READ on vehicle-service').isChecked()).toBe(false);
    expect(await stale.getByLabel('DRIVER may READ on vehicle-service').isChecked()).toBe(true);
    await fresh.close();
    await stale.close();
  }, 30_000);

  it('started without a config file, the page says edits live in memory', async () => {
    const mem = await startConsoleEnv({ memory: true });
    try {
      const page = await context.newPage();
      await page.goto(`${mem.iam.baseUrl}/console`);
      await page.waitForSelector('body[data-ready="true"]');
      expect(await page.locator('#storage').textContent()).toBe('Started without a config file: edits live in memory only and are lost when the IAM stops.');
      await page.getByLabel('OWNER may WRITE on vehicle-service').uncheck();
      await page.locator('#save').click();
      await page.locator('#message').getByText('Saved in memory.').waitFor();
      expect(mem.iam.policyOf('app-1')!.roles[1]!.servicePolicies![0]!.permissions).toStrictEqual([{ key: 'READ' }]);
      await page.close();
    } finally {
      await mem.close();
    }
  }, 30_000);

  it('"Try it": hostile reference values and a typed URL reach curl as one inert argument each (run by sh with a fake curl)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'iam-curl-'));
    const bin = join(dir, 'bin');
    await mkdir(bin);
    // The fake curl writes its arguments, NUL-separated, and does nothing else.
    await writeFile(join(bin, 'curl'), '#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGV_FILE"\n');
    await chmod(join(bin, 'curl'), 0o755);
    const marker = (name: string) => join(dir, `pwned-${name}`);
    const values = [
      `$(touch ${marker('dollar')})`,
      `\`touch ${marker('backtick')}\``,
      `x'; touch ${marker('quote')}; echo '`,
      `a & touch ${marker('amp')}`,
      `two words "double" 'single' $HOME !x`,
    ];
    const config = await exampleConfig();
    const alice = config.actors.find((a) => a.id === 'actor-alice')!;
    alice.tenants = Object.fromEntries(values.map((v, i) => [`t-${i}`, [{ r: ['DRIVER'], c: [`VIN=${v}`] }]]));
    const hostile = await startConsoleEnv({ config });
    const run = async (line: string): Promise<string[]> => {
      const argvFile = join(dir, 'argv');
      await rm(argvFile, { force: true });
      execFileSync('/bin/sh', ['-c', line], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, ARGV_FILE: argvFile } });
      return (await readFile(argvFile, 'utf8')).split('\0').slice(0, -1);
    };
    try {
      const page = await context.newPage();
      await page.goto(`${hostile.iam.baseUrl}/console`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.locator('#tab-tokens').click();
      for (const [i, value] of values.entries()) {
        await page.locator('#mint-actor').selectOption('actor-alice');
        await page.locator('#mint-tenant').selectOption(`t-${i}`);
        await page.locator('#mint').click();
        await expect.poll(() => page.locator('#token-claims').textContent()).toContain(`"tid": "t-${i}"`);
        const token = await page.locator('#token-text').inputValue();
        // The reference is valid in the dev IAM: in the token as written, and granted by the library's decision.
        expect(await page.locator('#token-ars').textContent()).toContain(`VIN=${value}`);
        const explained = await hostile.client.send('POST', 'explain', { token, service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value } });
        expect(explained.json().decision).toMatchObject({ granted: true });

        const argv = await run((await page.locator('#curl-line').textContent())!);
        expect(argv).toStrictEqual(['-i', '-X', 'GET', `http://127.0.0.1:3000/vehicle/${encodeURIComponent(value)}`, '-H', `Authorization: Bearer ${token}`]);
      }
      // A URL typed by the user, with the PUT body.
      const typed = `http://127.0.0.1:3000/x?a=1&b=$(touch ${marker('url')})'; touch ${marker('url2')} #\`touch ${marker('url3')}\``;
      await page.locator('#curl-url').fill(typed);
      await page.locator('#curl-method').selectOption('PUT');
      const token = await page.locator('#token-text').inputValue();
      expect(await run((await page.locator('#curl-line').textContent())!)).toStrictEqual([
        '-i', '-X', 'PUT', typed, '-H', `Authorization: Bearer ${token}`, '-H', 'content-type: application/json', '-d', '{"color":"red"}',
      ]);
      // No command hidden in a value ran.
      expect((await readdir(dir)).filter((f) => f.startsWith('pwned-'))).toStrictEqual([]);
      await page.close();
    } finally {
      await hostile.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('raised no script or CSP errors', () => {
    expect(problems).toStrictEqual([]);
  });
});
