/**
 * The largest policy bodies `policy.maxBytes` accepts, as the IAM would send them: the worst shape
 * for parsing and compiling (one role holding every permission) and the typical one (many roles of
 * a few permissions each). Used by test/policy/stall.test.ts and bench/micro/policy-stall.bench.ts.
 */

/** The service of every permission in these policies. */
export const LARGE_SERVICE = 'svc';
/** The one role of {@link oneRolePolicyText}. */
export const LARGE_ROLE = 'ADMIN';

/** One role, one service policy, permissions `P0`, `P1`, … until the JSON text is as large as fits in `maxBytes`. */
export function oneRolePolicyText(applicationId: string, maxBytes: number): { text: string; permissions: number } {
  const head = `{"applicationId":${JSON.stringify(applicationId)},"changeId":"big-1","roles":[{"key":"${LARGE_ROLE}","servicePolicies":[{"serviceDefinitionSource":"APPLICATION","serviceDefinitionKey":"${LARGE_SERVICE}","permissions":[`;
  const tail = ']}]}]}';
  const items: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; ; i++) {
    const item = `{"key":"P${i}"}`;
    if (size + item.length + 1 > maxBytes) break;
    items.push(item);
    size += item.length + (i > 0 ? 1 : 0);
  }
  return { text: head + items.join(',') + tail, permissions: items.length };
}

/** One typical role: three permissions on one of 20 services. */
export function typicalRole(i: number): string {
  return `{"key":"ROLE_${i}","servicePolicies":[{"serviceDefinitionSource":"APPLICATION","serviceDefinitionKey":"service-${i % 20}","permissions":[{"key":"READ"},{"key":"WRITE"},{"key":"PERM_${i % 7}"}]}]}`;
}

/** Typical roles ({@link typicalRole}) until the JSON text is as large as fits in `maxBytes`. */
export function manyRolesPolicyText(applicationId: string, maxBytes: number): { text: string; roles: number } {
  const head = `{"applicationId":${JSON.stringify(applicationId)},"changeId":"big-1","roles":[`;
  const tail = ']}';
  const items: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; ; i++) {
    const item = typicalRole(i);
    if (size + item.length + 1 > maxBytes) break;
    items.push(item);
    size += item.length + (i > 0 ? 1 : 0);
  }
  return { text: head + items.join(',') + tail, roles: items.length };
}
