/**
 * The demo: real tokens through the whole flow (built-in IdP → token exchange → vehicle-service),
 * then a table of actor × request × status, each checked against what the spec says it must be.
 */
import { IamTokenClient } from 'iam-authz/client';
import type { DevIam } from 'iam-authz-dev';

export interface DemoRow {
  actor: string;
  request: string;
  expected: number;
  status: number;
}

export interface DemoTokens {
  alice: string;
  bob: string;
  expired: string;
}

/** Gets alice's and bob's tokens the way a real caller would, and mints one expired token. */
export async function demoTokens(iam: DevIam): Promise<DemoTokens> {
  const exchange = async (subject: string): Promise<string> => {
    const client = new IamTokenClient({
      baseUrl: iam.baseUrl,
      idpKey: 'dev',
      idpToken: async () => {
        const res = await fetch(`${iam.baseUrl}/dev-idp/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ subject }),
        });
        if (!res.ok) throw new Error(`dev IdP answered ${res.status}`);
        return res.text();
      },
    });
    try {
      return await client.getToken({ tenantId: 'tenant-1', expiryInSecs: 3600 });
    } finally {
      await client.close();
    }
  };
  const [alice, bob] = await Promise.all([exchange('alice'), exchange('bob')]);
  const expired = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(Date.now() / 1000) - 60 } });
  return { alice, bob, expired };
}

export async function runDemo(serviceUrl: string, tokens: DemoTokens): Promise<DemoRow[]> {
  const cases: { actor: string; token?: string; method: 'GET' | 'PUT'; vin: string; expected: number }[] = [
    { actor: 'alice (DRIVER)', token: tokens.alice, method: 'GET', vin: 'WVW1', expected: 200 },
    { actor: 'alice (DRIVER)', token: tokens.alice, method: 'PUT', vin: 'WVW1', expected: 403 },
    { actor: 'bob (OWNER)', token: tokens.bob, method: 'PUT', vin: 'WVW1', expected: 200 },
    { actor: '(no token)', method: 'GET', vin: 'WVW1', expected: 401 },
    { actor: 'alice, expired token', token: tokens.expired, method: 'GET', vin: 'WVW1', expected: 401 },
    { actor: 'alice (DRIVER)', token: tokens.alice, method: 'GET', vin: 'WVW2', expected: 403 },
  ];
  const rows: DemoRow[] = [];
  for (const c of cases) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    const res = await fetch(`${serviceUrl}/vehicle/${c.vin}`, {
      method: c.method,
      headers,
      ...(c.method === 'PUT' ? { body: JSON.stringify({ color: 'red' }) } : {}),
    });
    await res.arrayBuffer();
    rows.push({ actor: c.actor, request: `${c.method} /vehicle/${c.vin}`, expected: c.expected, status: res.status });
  }
  // The list endpoint: alice may read WVW1 only, bob WVW1; the answer is read from the token.
  for (const [actor, token, expected] of [['alice (DRIVER)', tokens.alice, 'WVW1'], ['(no token)', undefined, '']] as const) {
    const res = await fetch(`${serviceUrl}/vehicles`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    const body: unknown = await res.json().catch(() => undefined);
    const vins = Array.isArray(body) ? body.map((v: { vin?: unknown }) => String(v.vin)).join(',') : '';
    // A 200 whose list is not the expected one counts as a mismatch (shown as status 0).
    const status = res.status === 200 && vins !== expected ? 0 : res.status;
    rows.push({ actor, request: `GET /vehicles${expected ? ` → ${expected}` : ''}`, expected: token === undefined ? 401 : 200, status });
  }
  return rows;
}

export function formatRows(rows: DemoRow[]): string {
  const header = ['actor', 'request', 'status', 'expected', ''];
  const lines = rows.map((r) => [r.actor, r.request, String(r.status), String(r.expected), r.status === r.expected ? 'ok' : 'MISMATCH']);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cols: string[]) => cols.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
