/**
 * `iam-authz check`: a contract check for CI. Holds what a service's guards ask for (its inventory,
 * `authorizer.inventory()` as JSON) against the role policy of each application it serves, and fails
 * on a permission no role grants — a guard whose every request would be a correct-looking 403 — in
 * review instead of in production. Reading and checking the inputs is ./check-input.ts.
 */
import type { InventoryEntry } from 'iam-authz';

type InventoryRoute = NonNullable<InventoryEntry['route']>;
import type { RolePolicy } from '../policy.js';
import { isUrl, policyUrl, readInventory, readPolicies } from './check-input.js';
import { escapeUnsafe, TOKEN_ENV, tokenFrom, visible } from './terminal.js';
import { parse, required, UsageError } from './usage.js';

export const CHECK_HELP = `usage: iam-authz check --inventory FILE --policy FILE
       iam-authz check --inventory FILE --policy URL [--token T | --token -]

Holds what a service's guards ask for against the role policy of each application it serves, so
that a permission no role grants (a guard whose every request is denied) fails CI, not production.
Each permission asked for must be granted by some role in EACH application's policy given; a
requireAnyPermission guard needs any one of its permissions, as it does at run time. Guards in
report mode count too: they are meant to enforce.

options:
  --inventory FILE  the service's inventory, JSON.stringify(authorizer.inventory()), written once
                    all its routes are set up (e.g. in a test)
  --policy FILE     a role policy document (the policy API's answer), or an array of them, one per
                    application
  --policy URL      an IAM's policy API, e.g. http://127.0.0.1:4000/policy/v1/roles: it answers the
                    policy of the token's application. https, or http to a loopback host only;
                    10 s and 16 MiB at most; a redirect is not followed
  --token T         the IAM token sent to --policy URL; "--token -" reads it from stdin. Without
                    --token: from ${TOKEN_ENV} if set, else from stdin. Never printed.

Text from the files and the IAM is printed with control and bidi characters as \\uXXXX escapes.

exit status: 0 every permission granted; 1 some not granted, each listed with its application and
the method and path (or Nest Controller.handler) of every route asking for it; 2 a usage error, or
input that cannot be read or is not what it should be (one line saying which and why)`;

/** One thing asked for: a permission, or any one of several; the guards asking for it. */
interface Asked {
  readonly service: string;
  readonly permissions: readonly string[];
  readonly any: boolean;
  readonly entries: InventoryEntry[];
}

export async function checkCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { inventory: { type: 'string' }, policy: { type: 'string' }, token: { type: 'string' } });
  const inventoryFile = required(values.inventory, 'inventory');
  const source = required(values.policy, 'policy');
  const remote = isUrl(source);
  if (!remote && values.token !== undefined) throw new UsageError('--token goes with --policy URL only: a policy file needs no token');
  try {
    // The URL is checked before a token is waited for on stdin.
    if (remote) policyUrl(source);
    const token = remote ? await tokenFrom(values.token) : undefined;
    const inventory = await readInventory(inventoryFile);
    const { name, policies } = await readPolicies(source, token);
    return report(visible(inventoryFile), inventory, name, policies);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Exit status 1 says "ungranted" to CI: any failure to check is 2, a sentence and no stack.
    const message = error instanceof Error ? error.message : String(error);
    console.error(`iam-authz check: ${escapeUnsafe(message)}`);
    return 2;
  }
}

/** Prints the outcome; 0 when every permission is granted in every policy, else 1. */
function report(inventoryName: string, inventory: readonly InventoryEntry[], policyName: string, policies: readonly RolePolicy[]): number {
  const asked = group(inventory);
  const apps = policies.map((p) => `${visible(p.applicationId)} (changeId ${visible(p.changeId)})`).join(', ');
  if (asked.length === 0) {
    console.log(`ok: ${inventoryName} lists no guard, so nothing is asked for (was it written before the routes were set up?)`);
    return 0;
  }
  const lines: string[] = [];
  let missingCount = 0;
  let failingApps = 0;
  for (const policy of policies) {
    const granted = grantedBy(policy);
    const missing = asked.filter((a) => !a.permissions.some((p) => granted.get(a.service)?.has(p) === true));
    if (missing.length === 0) continue;
    failingApps += 1;
    missingCount += missing.length;
    lines.push(`no role of application ${visible(policy.applicationId)} (changeId ${visible(policy.changeId)}, ${policyName}) grants:`);
    for (const a of missing) {
      const what = a.any ? `any of ${a.permissions.map(visible).join(', ')}` : visible(a.permissions[0] ?? '');
      const hint = (granted.get(a.service)?.size ?? 0) > 0 ? '' : ` (no role grants anything in ${visible(a.service)})`;
      lines.push(`  ${visible(a.service)} ${what}${hint}`);
      for (const where of routesOf(a.entries)) lines.push(`    ${where}`);
    }
  }
  if (failingApps === 0) {
    console.log(`ok: every permission ${inventoryName} asks for (${asked.length}, from ${inventory.length} guards) is granted by some role of ${apps}`);
    return 0;
  }
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  lines.push(`${plural(missingCount, 'permission')} granted by no role, in ${failingApps} of ${plural(policies.length, 'application')}`);
  console.log(lines.join('\n'));
  return 1;
}

/** The inventory's entries by what they ask for, in the inventory's order (it is sorted by service). */
function group(inventory: readonly InventoryEntry[]): Asked[] {
  const byKey = new Map<string, Asked>();
  for (const entry of inventory) {
    const any = entry.permissions !== undefined;
    const permissions = entry.permissions ?? [entry.permission ?? ''];
    const key = `${entry.service}\u0000${any ? 'any\u0000' : ''}${permissions.join('\u0000')}`;
    const known = byKey.get(key);
    if (known) known.entries.push(entry);
    else byKey.set(key, { service: entry.service, permissions, any, entries: [entry] });
  }
  return [...byKey.values()];
}

/** Service → every permission some role of `policy` grants in it. */
function grantedBy(policy: RolePolicy): Map<string, Set<string>> {
  const granted = new Map<string, Set<string>>();
  for (const role of policy.roles) {
    for (const sp of role.servicePolicies ?? []) {
      let set = granted.get(sp.serviceDefinitionKey);
      if (!set) granted.set(sp.serviceDefinitionKey, set = new Set());
      for (const p of sp.permissions) set.add(p.key);
    }
  }
  return granted;
}

/** `GET /vehicles/:vin`, `VehicleController.write`, each once; a report-mode guard says so. */
function routesOf(entries: readonly InventoryEntry[]): string[] {
  const seen = new Set<string>();
  for (const { route, mode } of entries) {
    const where = route === undefined ? '(route not recorded: call auditRoutes(app) before writing the inventory)' : routeText(route);
    seen.add(mode === 'report' ? `${where} (report mode: logged, not yet denied)` : where);
  }
  return [...seen];
}

function routeText(route: InventoryRoute): string {
  return 'method' in route ? `${visible(route.method)} ${visible(route.path)}` : `${visible(route.controller)}.${visible(route.handler)}`;
}
