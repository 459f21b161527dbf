/** The Roles view: the roles × permissions matrix of the chosen application, and its changeId with its history. */
import { button, field, h, safe, textInput } from './dom.js';
import { say } from './messages.js';
import { render } from './render.js';
import { updateDirty } from './savebar.js';
import { appIndex, currentApp, state } from './state.js';
import type { Role, ServiceDefinition } from './types.js';

function changeIdBlock(): HTMLElement {
  const info = state.status?.applications.find((x) => x.id === state.app);
  if (!info) return h('p', { class: 'changeid hint' }, 'Not saved yet: no changeId.');
  return h('div', {},
    h('p', { class: 'changeid' }, 'changeId in force: ', h('code', { id: 'changeid' }, info.changeId),
      ' — a hash of the services and roles; consuming services refetch the policy when it changes.'),
    h('details', {}, h('summary', {}, `changeId history (${info.history.length})`),
      h('ol', { class: 'history', id: 'changeid-history' }, ...info.history.map((e) => h('li', {}, h('code', {}, e.changeId), ` since ${new Date(e.at).toLocaleString()}`)))));
}

export function rolesView(): HTMLElement {
  const app = currentApp();
  const a = appIndex();
  const section = h('section', { class: 'view', id: 'view-roles' }, h('h2', {}, app ? `Roles × permissions of ${app.id}` : 'Roles'));
  if (!app) return section;
  section.append(changeIdBlock());
  const services = app.serviceDefinitions;
  const headTop = h('tr', {}, h('th', { rowspan: 2, scope: 'col' }, 'Role'),
    ...services.map((s) => h('th', { colspan: Math.max(1, s.permissions.length), scope: 'colgroup' }, s.key)),
    h('th', { rowspan: 2, scope: 'col' }, h('span', { class: 'sr-only' }, 'Remove')));
  const headPerms = h('tr', {}, ...services.flatMap((s) => (s.permissions.length === 0 ? [h('th', { scope: 'col' }, '—')] : s.permissions.map((p) => h('th', { scope: 'col' }, p)))));
  const rows = app.roles.map((role, r) => {
    const keyInput = textInput(role.key, `applications[${a}].roles[${r}].key`, () => undefined, (v) => { if (v.trim() !== '') role.key = v.trim(); render(); });
    keyInput.id = `role-${r}-key`;
    keyInput.setAttribute('aria-label', `Key of role ${role.key}`);
    const cells = services.flatMap((s) => {
      if (s.permissions.length === 0) return [h('td', { class: 'cell' }, '')];
      return s.permissions.map((p) => {
        const id = `grant-${safe(role.key)}-${safe(s.key)}-${safe(p)}`;
        const box = h('input', {
          type: 'checkbox', id, checked: (role.permissions[s.key] ?? []).includes(p),
          'aria-label': `${role.key} may ${p} on ${s.key}`, 'data-path': `applications[${a}].roles[${r}].permissions.${s.key}`,
        }) as HTMLInputElement;
        box.addEventListener('change', () => { toggleGrant(role, s, p, box.checked); updateDirty(); });
        return h('td', { class: 'cell' }, box);
      });
    });
    return h('tr', {}, h('th', { scope: 'row' }, keyInput), ...cells,
      h('td', {}, button(`Remove role ${role.key}`, () => { app.roles = app.roles.filter((x) => x !== role); render(); }, { class: 'danger', id: `role-${r}-remove` })));
  });
  section.append(h('table', { class: 'matrix', id: 'matrix' },
    h('caption', { class: 'sr-only' }, `Roles of ${app.id} and the permissions they grant`),
    h('thead', {}, headTop, headPerms), h('tbody', {}, ...rows)));
  const newRole = h('input', { type: 'text', placeholder: 'FLEET_MANAGER' }) as HTMLInputElement;
  section.append(h('div', { class: 'row' },
    field('new-role-key', 'New role key', newRole),
    button('Add role', () => {
      const key = newRole.value.trim();
      if (key === '') { say('error', 'Give the new role a key.'); return; }
      app.roles.push({ key, permissions: {} });
      render();
    }, { id: 'add-role' })));
  section.append(h('p', { class: 'hint' }, 'A role may only grant the permission keys its service lists. Save to put the change in force.'));
  return section;
}

function toggleGrant(role: Role, service: ServiceDefinition, permission: string, on: boolean): void {
  const current = new Set(role.permissions[service.key] ?? []);
  if (on) current.add(permission);
  else current.delete(permission);
  // Keep the service's own order, so the saved file reads the way the matrix does.
  const next = service.permissions.filter((p) => current.has(p));
  if (next.length === 0) role.permissions = Object.fromEntries(Object.entries(role.permissions).filter(([k]) => k !== service.key));
  else role.permissions = { ...role.permissions, [service.key]: next };
}
