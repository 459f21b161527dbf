/**
 * The Decision explorer: asks the console's explain and accessible routes (the library's own
 * Authorizer, pointed at this IAM) and shows the decision and why, or the resources a token may use.
 */
import { api } from './api.js';
import { button, byId, field, h, select } from './dom.js';
import { state } from './state.js';
import type { ApiError, Decision } from './types.js';

const REASONS: Record<string, (d: Decision, service: string, permission: string) => string> = {
  GRANTED: (d) => `role ${d.grantedBy?.role ?? '?'} grants ${d.grantedBy?.permission ?? '?'} on ${d.grantedBy?.service ?? '?'}`,
  NO_MATCHING_REFERENCE: (d) => `no access reference of the token names ${d.reference}, so it holds no role for it`,
  ROLE_NOT_IN_POLICY: (d) => `the token's roles for ${d.reference} (${d.roles.join(', ')}) are not roles of the application's policy`,
  NO_SERVICE_POLICY: (d, s) => `none of the roles ${d.roles.join(', ')} has permissions for service ${s}`,
  PERMISSION_NOT_GRANTED: (d, s, p) => `the roles ${d.roles.join(', ')} have permissions for ${s}, but not ${p}`,
  INVALID_RESOURCE: () => 'the resource is not a usable reference',
};

export function decisionsView(): HTMLElement {
  const services = [...new Set(state.saved.applications.flatMap((a) => a.serviceDefinitions.map((s) => s.key)))];
  const permissions = [...new Set(state.saved.applications.flatMap((a) => a.serviceDefinitions.flatMap((s) => s.permissions)))];
  const token = h('textarea', { rows: 4, placeholder: 'eyJ… (minted above, or pasted)' }, state.minted?.token ?? '') as HTMLTextAreaElement;
  const service = h('input', { type: 'text', list: 'service-list', value: services[0] ?? '' }) as HTMLInputElement;
  const permission = h('input', { type: 'text', list: 'permission-list', value: permissions[0] ?? '' }) as HTMLInputElement;
  const kind = select(['custom reference (TYPE=value)', 'node id'], 'custom reference (TYPE=value)', () => undefined);
  const resource = h('input', { type: 'text', value: 'VIN=WVW1' }) as HTMLInputElement;
  const type = h('input', { type: 'text', value: 'VIN' }) as HTMLInputElement;
  const query = () => ({ token: token.value.trim(), service: service.value.trim(), permission: permission.value.trim() });
  return h('section', { class: 'view', id: 'view-decisions' }, h('h2', {}, 'Decision explorer'),
    h('p', { class: 'hint' }, 'Asks the library\'s own Authorizer, pointed at this IAM: token verification, policy fetch and decision, as a consuming service computes them.'),
    h('datalist', { id: 'service-list' }, ...services.map((s) => h('option', { value: s }))),
    h('datalist', { id: 'permission-list' }, ...permissions.map((p) => h('option', { value: p }))),
    field('explain-token', 'Token', token),
    h('div', { class: 'row' },
      state.minted ? button('Use the minted token', () => { token.value = state.minted?.token ?? ''; }, { id: 'use-minted' }) : undefined),
    h('div', { class: 'row' },
      field('explain-service', 'Service', service),
      field('explain-permission', 'Permission', permission),
      field('explain-kind', 'Resource kind', kind),
      field('explain-resource', 'Resource (VIN=WVW1, or a node id)', resource),
      button('Explain', () => {
        const text = resource.value.trim();
        const eq = text.indexOf('=');
        const res = kind.value === 'node id' ? { node: text } : { type: eq > 0 ? text.slice(0, eq) : text, value: eq > 0 ? text.slice(eq + 1) : '' };
        void explain({ ...query(), resource: res });
      }, { class: 'primary', id: 'explain' })),
    h('div', { id: 'explain-result', role: 'status', 'aria-live': 'polite' }),
    h('h3', {}, 'Resources this token may act on'),
    h('div', { class: 'row' },
      field('accessible-type', 'Reference type (empty: node ids)', type),
      button('List resources', () => { void listAccessible({ ...query(), ...(type.value.trim() === '' ? {} : { type: type.value.trim() }) }); }, { id: 'accessible' })),
    h('div', { id: 'accessible-result', role: 'status', 'aria-live': 'polite' }));
}

async function explain(body: { token: string; service: string; permission: string; resource: unknown }): Promise<void> {
  const out = byId('explain-result');
  const res = await api<{ outcome: 'decided'; decision: Decision; actor: string; application: string; tenant?: string } | { outcome: 'error'; error: ApiError } | { detail: string; field?: string }>('POST', 'explain', body);
  if (res.status !== 200 || !('outcome' in res.data)) {
    out.replaceChildren(h('span', { class: 'verdict error' }, 'Cannot ask'), ' ', 'detail' in res.data ? res.data.detail : `error ${res.status}`);
    return;
  }
  if (res.data.outcome === 'error') {
    const e = res.data.error;
    out.replaceChildren(h('span', { class: 'verdict error', id: 'verdict' }, `${e.status} ${e.code}`), h('p', {}, e.message));
    return;
  }
  const { decision: d, actor, application, tenant } = res.data;
  const words = REASONS[d.reason]?.(d, body.service, body.permission) ?? d.reason;
  out.replaceChildren(
    h('span', { class: `verdict ${d.granted ? 'granted' : 'denied'}`, id: 'verdict' }, d.granted ? 'Granted' : `Denied: ${d.reason}`),
    h('dl', { class: 'facts' },
      h('dt', {}, 'why'), h('dd', { id: 'reason' }, words),
      h('dt', {}, 'reference'), h('dd', {}, h('code', {}, d.reference)),
      h('dt', {}, 'roles for it'), h('dd', {}, d.roles.length > 0 ? d.roles.join(', ') : '(none)'),
      h('dt', {}, 'granting role'), h('dd', {}, d.grantedBy ? `${d.grantedBy.role} (${d.grantedBy.service} ${d.grantedBy.permission})` : '—'),
      h('dt', {}, 'changeId'), h('dd', {}, h('code', {}, d.changeId ?? '(no policy needed)')),
      h('dt', {}, 'caller'), h('dd', {}, `${actor} of ${application}${tenant === undefined ? '' : ` in ${tenant}`}`)));
}

async function listAccessible(body: { token: string; service: string; permission: string; type?: string }): Promise<void> {
  const out = byId('accessible-result');
  const res = await api<{ outcome: 'listed'; resources: { reference: string; grantedBy?: { role: string } }[]; checked: number } | { outcome: 'error'; error: ApiError } | { detail: string }>('POST', 'accessible', body);
  if (res.status !== 200 || !('outcome' in res.data)) {
    out.replaceChildren('detail' in res.data ? res.data.detail : `error ${res.status}`);
    return;
  }
  if (res.data.outcome === 'error') { out.replaceChildren(`${res.data.error.code}: ${res.data.error.message}`); return; }
  const { resources, checked } = res.data;
  out.replaceChildren(
    h('p', {}, `${resources.length} of the ${checked} reference(s) of that kind in the token allow ${body.permission} on ${body.service}.`),
    h('ul', { id: 'accessible-list' }, ...resources.map((r) => h('li', {}, h('code', {}, r.reference), ` via ${r.grantedBy?.role ?? '?'}`))));
}
