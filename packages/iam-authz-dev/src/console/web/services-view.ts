/** The Services view: the chosen application's services and their permission keys, and adding or removing applications. */
import { button, field, h, list, textInput } from './dom.js';
import { say } from './messages.js';
import { render } from './render.js';
import { appIndex, currentApp, state } from './state.js';
import type { Application, ServiceDefinition } from './types.js';

export function servicesView(): HTMLElement {
  const app = currentApp();
  const a = appIndex();
  const section = h('section', { class: 'view', id: 'view-services' }, h('h2', {}, app ? `Services of ${app.id}` : 'Services'));
  if (app) {
    app.serviceDefinitions.forEach((sd, i) => {
      const base = `applications[${a}].serviceDefinitions[${i}]`;
      const key = textInput(sd.key, `${base}.key`, () => undefined, (v) => { renameService(app, sd.key, v.trim()); render(); });
      const perms = textInput(sd.permissions.join(', '), `${base}.permissions`, () => undefined, (v) => { setServicePermissions(app, sd, list(v)); render(); });
      section.append(h('fieldset', {},
        h('legend', {}, `Service ${sd.key}`),
        h('div', { class: 'row' },
          field(`svc-${i}-key`, 'Service key', key),
          field(`svc-${i}-perms`, 'Permission keys (comma-separated)', perms),
          button(`Remove service ${sd.key}`, () => { removeService(app, sd.key); render(); }, { class: 'danger', id: `svc-${i}-remove` }))));
    });
    const newKey = h('input', { type: 'text', placeholder: 'vehicle-service' }) as HTMLInputElement;
    const newPerms = h('input', { type: 'text', placeholder: 'READ, WRITE' }) as HTMLInputElement;
    section.append(h('fieldset', {}, h('legend', {}, 'Add a service'), h('div', { class: 'row' },
      field('new-svc-key', 'New service key', newKey),
      field('new-svc-perms', 'Its permission keys (comma-separated)', newPerms),
      button('Add service', () => {
        const key = newKey.value.trim();
        if (key === '') { say('error', 'Give the new service a key.'); return; }
        app.serviceDefinitions.push({ key, permissions: list(newPerms.value) });
        render();
      }, { id: 'add-service' }))));
  }
  const newApp = h('input', { type: 'text', placeholder: 'app-2' }) as HTMLInputElement;
  section.append(h('fieldset', {}, h('legend', {}, 'Applications'),
    h('p', { class: 'hint' }, `This IAM has ${state.draft.applications.length} application(s). Each has its own services, roles and changeId; pick one above.`),
    h('div', { class: 'row' },
      field('new-app-id', 'New application id', newApp),
      button('Add application', () => {
        const id = newApp.value.trim();
        if (id === '') { say('error', 'Give the new application an id.'); return; }
        state.draft.applications.push({ id, serviceDefinitions: [], roles: [] });
        state.app = id;
        render();
      }, { id: 'add-app' }),
      app ? button(`Remove application ${app.id}`, () => {
        state.draft.applications = state.draft.applications.filter((x) => x !== app);
        state.app = state.draft.applications[0]?.id ?? '';
        render();
      }, { class: 'danger', id: 'remove-app' }) : undefined)));
  return section;
}

function renameService(app: Application, from: string, to: string): void {
  const sd = app.serviceDefinitions.find((s) => s.key === from);
  if (!sd || to === '' || to === from) return;
  sd.key = to;
  for (const role of app.roles) {
    const grants = role.permissions[from];
    if (grants === undefined) continue;
    role.permissions = Object.fromEntries(Object.entries(role.permissions).map(([k, v]) => [k === from ? to : k, v]));
  }
}

function setServicePermissions(app: Application, sd: ServiceDefinition, permissions: string[]): void {
  sd.permissions = permissions;
  for (const role of app.roles) {
    const grants = role.permissions[sd.key];
    if (grants) role.permissions[sd.key] = grants.filter((p) => permissions.includes(p));
  }
}

function removeService(app: Application, key: string): void {
  app.serviceDefinitions = app.serviceDefinitions.filter((s) => s.key !== key);
  for (const role of app.roles) role.permissions = Object.fromEntries(Object.entries(role.permissions).filter(([k]) => k !== key));
}
