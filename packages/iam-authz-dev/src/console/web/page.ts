/**
 * The console page's script (runs in the browser; compiled by the build, no bundler). It keeps the
 * saved configuration and a draft, renders one view at a time with DOM calls (never innerHTML), and
 * talks only to the console's JSON API. Minted tokens live in this module's memory and the page's
 * fields — never in localStorage or sessionStorage.
 */
export {};

interface ServiceDefinition { key: string; permissions: string[] }
interface Role { key: string; permissions: Record<string, string[]> }
interface Application { id: string; serviceDefinitions: ServiceDefinition[]; roles: Role[] }
interface AccessReference { r: string[]; c?: string[]; n?: string[] }
interface Actor { id: string; idp: string; subject: string; account: string; application: string; tenants: Record<string, AccessReference[]> }
interface Idp { key: string }
interface Config { idps: Idp[]; applications: Application[]; actors: Actor[] }
interface Status {
  storage: { kind: 'file'; file: string } | { kind: 'memory' };
  baseUrl: string;
  maxExpirySec: number;
  applications: { id: string; changeId: string; history: { changeId: string; at: string }[] }[];
}
interface Minted { token: string; header: Record<string, unknown>; claims: Record<string, unknown> }
interface Decision {
  granted: boolean; reference: string; roles: string[]; changeId?: string; reason: string;
  grantedBy?: { role: string; service: string; permission: string };
}
interface ApiError { status: number; code: string; message: string }
type View = 'services' | 'roles' | 'actors' | 'tokens' | 'decisions';

const state: {
  csrf: string;
  etag: string;
  saved: Config;
  draft: Config;
  status: Status | undefined;
  app: string;
  view: View;
  minted: Minted | undefined;
} = {
  csrf: '',
  etag: '',
  saved: { idps: [], applications: [], actors: [] },
  draft: { idps: [], applications: [], actors: [] },
  status: undefined,
  app: '',
  view: 'roles',
  minted: undefined,
};

// ---------------------------------------------------------------- DOM helpers

type Child = Node | string | undefined | false;
type Props = Record<string, string | boolean | number | EventListener | undefined>;

function h(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value') (el as HTMLInputElement).value = String(value);
    else if (name === 'checked') (el as HTMLInputElement).checked = value === true;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== undefined && child !== false) el.append(child);
  return el;
}

function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el;
}

/** A labelled field: `<div class=field><label for=id>text</label>control</div>`. */
function field(id: string, text: string, control: HTMLElement, error?: HTMLElement): HTMLElement {
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, text), control, error);
}

function textInput(value: string, path: string, onInput: (v: string) => void, onChange?: (v: string) => void): HTMLInputElement {
  const input = h('input', { type: 'text', value, 'data-path': path, autocomplete: 'off', spellcheck: 'false' }) as HTMLInputElement;
  input.addEventListener('input', () => { onInput(input.value); });
  if (onChange) input.addEventListener('change', () => { onChange(input.value); });
  return input;
}

function button(text: string, onClick: () => void, props: Props = {}): HTMLButtonElement {
  return h('button', { type: 'button', ...props, onclick: () => { onClick(); } }, text) as HTMLButtonElement;
}

function select(options: string[], value: string, onChange: (v: string) => void, path?: string): HTMLSelectElement {
  const el = h('select', path === undefined ? {} : { 'data-path': path }, ...options.map((o) => h('option', { value: o }, o))) as HTMLSelectElement;
  el.value = value;
  el.addEventListener('change', () => { onChange(el.value); });
  return el;
}

const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
const safe = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`);

// ---------------------------------------------------------------- API

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T names the route's answer for the caller
async function api<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<{ status: number; etag: string | null; data: T }> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    headers['x-csrf-token'] = state.csrf;
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(`/console/api/${path}`, init);
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), data: (text === '' ? undefined : JSON.parse(text)) as T };
}

async function loadAll(): Promise<void> {
  const [config, status] = await Promise.all([api<Config>('GET', 'config'), api<Status>('GET', 'status')]);
  state.saved = config.data;
  state.draft = structuredClone(config.data);
  state.etag = config.etag ?? '';
  state.status = status.data;
  if (!state.saved.applications.some((a) => a.id === state.app)) state.app = state.saved.applications[0]?.id ?? '';
}

async function refreshStatus(): Promise<void> {
  state.status = (await api<Status>('GET', 'status')).data;
}

// ---------------------------------------------------------------- messages, dirty state, save

function say(kind: 'error' | 'info', text: string, action?: HTMLButtonElement): void {
  const box = byId('message');
  box.replaceChildren(text, ...(action ? [action] : []));
  box.className = kind;
  box.hidden = false;
}

function clearMessage(): void {
  const box = byId('message');
  box.hidden = true;
  box.replaceChildren();
}

function isDirty(): boolean {
  return JSON.stringify(state.draft) !== JSON.stringify(state.saved);
}

function updateDirty(): void {
  const dirty = isDirty();
  const label = byId('dirty');
  label.textContent = dirty ? 'Unsaved changes' : 'No unsaved changes';
  label.className = dirty ? 'unsaved' : '';
  (byId('save') as HTMLButtonElement).disabled = !dirty;
  (byId('discard') as HTMLButtonElement).disabled = !dirty;
  scheduleValidation();
}

/** Marks the control whose `data-path` is the bad field, or the nearest enclosing one. */
function markField(fieldPath: string | undefined): void {
  for (const el of document.querySelectorAll('[aria-invalid="true"][data-server-error]')) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('data-server-error');
  }
  if (fieldPath === undefined) return;
  let best: HTMLElement | undefined;
  let bestLength = -1;
  for (const el of document.querySelectorAll<HTMLElement>('[data-path]')) {
    const p = el.dataset.path ?? '';
    if ((fieldPath === p || fieldPath.startsWith(`${p}.`) || fieldPath.startsWith(`${p}[`)) && p.length > bestLength) {
      best = el;
      bestLength = p.length;
    }
  }
  if (best) {
    best.setAttribute('aria-invalid', 'true');
    best.setAttribute('data-server-error', '');
  }
}

async function save(): Promise<void> {
  const res = await api<Config & { detail?: string; field?: string }>('PUT', 'config', state.draft, { 'if-match': state.etag });
  if (res.status === 200) {
    state.saved = res.data;
    state.draft = structuredClone(res.data);
    state.etag = res.etag ?? '';
    await refreshStatus();
    render();
    const where = state.status?.storage.kind === 'file' ? 'Saved to the config file.' : 'Saved in memory.';
    say('info', `${where} Running services pick up the new changeId on their next policy check.`);
    return;
  }
  if (res.status === 409) {
    say('error', 'Not saved: the configuration was changed elsewhere (another tab, a script or the file) since this page loaded it. Reload to get the current version, then make your change again.',
      button('Reload', () => { void reload(); }));
    return;
  }
  if (res.status === 403) {
    say('error', `Not saved: ${res.data.detail ?? 'refused'}. Reload the page to start a new session.`);
    return;
  }
  markField(res.data.field);
  say('error', `Not saved: ${res.data.detail ?? `error ${res.status}`}`);
}

async function reload(): Promise<void> {
  await loadAll();
  clearMessage();
  render();
}

let validationTimer: number | undefined;
/** Validated as you type: the draft goes through the server's config validation (nothing is saved). */
function scheduleValidation(): void {
  window.clearTimeout(validationTimer);
  if (!isDirty()) {
    markField(undefined);
    byId('dirty').textContent = 'No unsaved changes';
    return;
  }
  validationTimer = window.setTimeout(() => {
    void api<{ valid?: boolean; detail?: string; field?: string }>('POST', 'config/validate', state.draft).then((res) => {
      if (!isDirty()) return;
      markField(res.status === 200 ? undefined : res.data.field);
      byId('dirty').textContent = res.status === 200 ? 'Unsaved changes (valid)' : `Unsaved changes — ${res.data.detail ?? 'invalid'}`;
    });
  }, 300);
}

// ---------------------------------------------------------------- rendering

function currentApp(): Application | undefined {
  return state.draft.applications.find((a) => a.id === state.app);
}

function appIndex(): number {
  return state.draft.applications.findIndex((a) => a.id === state.app);
}

/** Rebuilds the header and the current view, keeping keyboard focus on the same control. */
function render(): void {
  const focused = document.activeElement?.id;
  const storage = byId('storage');
  if (state.status?.storage.kind === 'file') {
    storage.textContent = `Edits are saved to ${state.status.storage.file}`;
    storage.className = '';
  } else {
    storage.textContent = 'Started without a config file: edits live in memory only and are lost when the IAM stops.';
    storage.className = 'memory';
  }
  const apps = state.draft.applications.map((a) => a.id);
  const picker = (byId('app-select') as HTMLSelectElement);
  picker.replaceChildren(...apps.map((id) => h('option', { value: id }, id)));
  picker.value = state.app;
  for (const tab of document.querySelectorAll<HTMLButtonElement>('nav button')) {
    if (tab.dataset.view === state.view) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  const main = byId('main');
  const views: Record<View, () => HTMLElement> = { services: servicesView, roles: rolesView, actors: actorsView, tokens: tokensView, decisions: decisionsView };
  main.replaceChildren(views[state.view]());
  main.setAttribute('aria-labelledby', `tab-${state.view}`);
  updateDirty();
  if (focused !== undefined && focused !== '') document.getElementById(focused)?.focus();
}

function servicesView(): HTMLElement {
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

function changeIdBlock(): HTMLElement {
  const info = state.status?.applications.find((x) => x.id === state.app);
  if (!info) return h('p', { class: 'changeid hint' }, 'Not saved yet: no changeId.');
  return h('div', {},
    h('p', { class: 'changeid' }, 'changeId in force: ', h('code', { id: 'changeid' }, info.changeId),
      ' — a hash of the services and roles; consuming services refetch the policy when it changes.'),
    h('details', {}, h('summary', {}, `changeId history (${info.history.length})`),
      h('ol', { class: 'history', id: 'changeid-history' }, ...info.history.map((e) => h('li', {}, h('code', {}, e.changeId), ` since ${new Date(e.at).toLocaleString()}`)))));
}

function rolesView(): HTMLElement {
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

/** Local checks while typing (the server's validation follows): why a list field is wrong, or ''. */
function listMistake(kind: 'r' | 'c' | 'n', values: string[]): string {
  if (kind === 'r' && values.length === 0) return 'at least one role';
  if (kind === 'c') {
    const bad = values.find((v) => !/^[^=]+=.+$/.test(v));
    if (bad !== undefined) return `"${bad}" is not TYPE=value`;
  }
  return '';
}

function actorsView(): HTMLElement {
  const section = h('section', { class: 'view', id: 'view-actors' }, h('h2', {}, 'Actors'),
    h('p', { class: 'hint' }, 'Each actor maps an IdP subject to a token subject, per tenant with access references: r = roles, c = TYPE=value references, n = node ids (comma-separated).'));
  const idps = state.draft.idps.map((i) => i.key);
  const apps = state.draft.applications.map((a) => a.id);
  state.draft.actors.forEach((actor, i) => {
    const base = `actors[${i}]`;
    const set = (k: 'id' | 'subject' | 'account') => (v: string) => { actor[k] = v; updateDirty(); };
    const tenants = Object.entries(actor.tenants).map(([tenant, refs], t) => {
      const tid = `actor-${i}-tenant-${t}`;
      const tenantInput = textInput(tenant, `${base}.tenants.${tenant}`, () => undefined, (v) => {
        const to = v.trim();
        if (to !== '' && to !== tenant) actor.tenants = Object.fromEntries(Object.entries(actor.tenants).map(([k, x]) => [k === tenant ? to : k, x]));
        render();
      });
      const rows = refs.map((ref, j) => {
        const rp = `${base}.tenants.${tenant}[${j}]`;
        const cell = (kind: 'r' | 'c' | 'n', text: string) => {
          const id = `${tid}-ref-${j}-${kind}`;
          const error = h('span', { class: 'error-text', id: `${id}-error`, 'aria-live': 'polite' });
          const input = textInput((ref[kind] ?? []).join(', '), `${rp}.${kind}`, (v) => {
            const values = list(v);
            if (kind === 'r') ref.r = values;
            else if (values.length === 0) Reflect.deleteProperty(ref, kind);
            else ref[kind] = values;
            const mistake = listMistake(kind, values);
            error.textContent = mistake;
            if (mistake === '') input.removeAttribute('aria-invalid');
            else input.setAttribute('aria-invalid', 'true');
            updateDirty();
          });
          input.setAttribute('aria-describedby', `${id}-error`);
          return h('td', {}, h('label', { for: id, class: 'sr-only' }, `${text} of reference ${j + 1} in ${tenant}`), Object.assign(input, { id }), error);
        };
        return h('tr', {}, cell('r', 'Roles'), cell('c', 'References'), cell('n', 'Node ids'),
          h('td', {}, button(`Remove reference ${j + 1}`, () => { refs.splice(j, 1); render(); }, { class: 'danger', id: `${tid}-ref-${j}-remove` })));
      });
      return h('fieldset', {}, h('legend', {}, `Tenant ${tenant}`),
        h('div', { class: 'row' }, field(`${tid}-id`, 'Tenant id', tenantInput),
          button(`Remove tenant ${tenant}`, () => { actor.tenants = Object.fromEntries(Object.entries(actor.tenants).filter(([k]) => k !== tenant)); render(); }, { class: 'danger', id: `${tid}-remove` })),
        h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Roles (r)'), h('th', { scope: 'col' }, 'References (c: TYPE=value)'), h('th', { scope: 'col' }, 'Node ids (n)'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Remove')))),
          h('tbody', {}, ...rows)),
        h('div', { class: 'row' }, button('Add access reference', () => { refs.push({ r: [], c: [] }); render(); }, { id: `${tid}-add-ref` })));
    });
    const newTenant = h('input', { type: 'text', placeholder: 'tenant-2' }) as HTMLInputElement;
    section.append(h('fieldset', {}, h('legend', {}, `Actor ${actor.id}`),
      h('div', { class: 'row' },
        field(`actor-${i}-id`, 'Actor id (token sub)', textInput(actor.id, `${base}.id`, set('id'), () => { render(); })),
        field(`actor-${i}-idp`, 'IdP', select(idps, actor.idp, (v) => { actor.idp = v; updateDirty(); }, `${base}.idp`)),
        field(`actor-${i}-subject`, 'IdP subject', textInput(actor.subject, `${base}.subject`, set('subject'))),
        field(`actor-${i}-account`, 'Account', textInput(actor.account, `${base}.account`, set('account'))),
        field(`actor-${i}-app`, 'Application', select(apps, actor.application, (v) => { actor.application = v; updateDirty(); }, `${base}.application`))),
      ...tenants,
      h('div', { class: 'row' },
        field(`actor-${i}-new-tenant`, 'New tenant id', newTenant),
        button('Add tenant', () => {
          const t = newTenant.value.trim();
          if (t === '') { say('error', 'Give the tenant an id.'); return; }
          actor.tenants = { ...actor.tenants, [t]: [{ r: [], c: [] }] };
          render();
        }, { id: `actor-${i}-add-tenant` }),
        button(`Remove actor ${actor.id}`, () => { state.draft.actors.splice(i, 1); render(); }, { class: 'danger', id: `actor-${i}-remove` }))));
  });
  const newActor = h('input', { type: 'text', placeholder: 'actor-carol' }) as HTMLInputElement;
  section.append(h('fieldset', {}, h('legend', {}, 'Add an actor'), h('div', { class: 'row' },
    field('new-actor-id', 'New actor id', newActor),
    button('Add actor', () => {
      const id = newActor.value.trim();
      if (id === '') { say('error', 'Give the new actor an id.'); return; }
      state.draft.actors.push({ id, idp: idps[0] ?? '', subject: id, account: 'acc-1', application: state.app, tenants: {} });
      render();
    }, { id: 'add-actor' }))));
  return section;
}

function tokensView(): HTMLElement {
  const actors = state.saved.actors;
  const section = h('section', { class: 'view', id: 'view-tokens' }, h('h2', {}, 'Mint a token'),
    h('p', { class: 'hint' }, 'Signed by this IAM with its current key, exactly as the token endpoint would for the actor. Uses the saved configuration.'));
  const actorSelect = select(actors.map((a) => a.id), actors[0]?.id ?? '', () => { fillTenants(); });
  const tenantSelect = h('select', {}) as HTMLSelectElement;
  const fillTenants = () => {
    const actor = actors.find((a) => a.id === actorSelect.value);
    tenantSelect.replaceChildren(...Object.keys(actor?.tenants ?? {}).map((t) => h('option', { value: t }, t)));
  };
  fillTenants();
  const max = state.status?.maxExpirySec ?? 86_400;
  const expiry = h('input', { type: 'number', min: 1, max, step: 1, value: 3600 }) as HTMLInputElement;
  section.append(h('div', { class: 'row' },
    field('mint-actor', 'Actor', actorSelect),
    field('mint-tenant', 'Tenant', tenantSelect),
    field('mint-expiry', `Expiry (seconds, 1–${max})`, expiry),
    button('Mint token', () => { void mint(actorSelect.value, tenantSelect.value, Number(expiry.value)); }, { class: 'primary', id: 'mint' })));
  section.append(h('div', { id: 'mint-output' }, ...(state.minted ? mintedOutput(state.minted) : [])));
  return section;
}

async function mint(actor: string, tenantId: string, expiryInSecs: number): Promise<void> {
  const res = await api<Minted & { detail?: string }>('POST', 'tokens', { actor, tenantId, expiryInSecs });
  if (res.status !== 200) { say('error', `No token: ${res.data.detail ?? `error ${res.status}`}`); return; }
  clearMessage();
  state.minted = res.data;
  byId('mint-output').replaceChildren(...mintedOutput(res.data));
  byId('token-text').focus();
}

function copyButton(id: string, text: string, source: () => string): HTMLButtonElement {
  return button(text, () => {
    void navigator.clipboard.writeText(source()).then(
      () => { say('info', 'Copied to the clipboard.'); },
      () => { say('error', 'The browser refused the clipboard; select the text and copy it.'); },
    );
  }, { id });
}

/**
 * One shell word: single-quoted, each `'` written as `'\''`. Inside single quotes sh, bash and
 * zsh expand nothing (`$(…)`, backticks, `&`, `;`, `!`), so a reference value or a typed URL
 * reaches curl as exactly one argument and never runs as a command.
 */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function mintedOutput(minted: Minted): HTMLElement[] {
  const token = h('textarea', { rows: 4, readonly: true }, minted.token) as HTMLTextAreaElement;
  const ars = Array.isArray(minted.claims.ars) ? (minted.claims.ars as AccessReference[]) : [];
  const firstRef = ars.flatMap((a) => a.c ?? [])[0] ?? 'VIN=WVW1';
  const value = firstRef.slice(firstRef.indexOf('=') + 1) || 'WVW1';
  // The reference's value is one path segment, whatever it holds (spaces, '/', '?', '&').
  const url = h('input', { type: 'text', value: `http://127.0.0.1:3000/vehicle/${encodeURIComponent(value)}` }) as HTMLInputElement;
  const method = select(['GET', 'PUT'], 'GET', () => { curl.textContent = curlLine(); });
  const curl = h('pre', { id: 'curl-line', 'aria-live': 'polite' });
  const curlLine = () => {
    const body = method.value === 'PUT' ? ` -H ${shellQuote('content-type: application/json')} -d ${shellQuote('{"color":"red"}')}` : '';
    return `curl -i -X ${shellQuote(method.value)} ${shellQuote(url.value)} -H ${shellQuote(`Authorization: Bearer ${minted.token}`)}${body}`;
  };
  url.addEventListener('input', () => { curl.textContent = curlLine(); });
  curl.textContent = curlLine();
  return [
    h('h3', {}, 'Token'),
    field('token-text', 'Token (compact JWT; kept in this page only)', token),
    h('div', { class: 'row' }, copyButton('copy-token', 'Copy token', () => minted.token),
      button('Explain a decision with this token', () => { state.view = 'decisions'; render(); (byId('explain-token') as HTMLTextAreaElement).value = minted.token; byId('explain-token').focus(); }, { id: 'to-explorer' })),
    h('div', { class: 'decoded' },
      h('div', {}, h('h3', {}, 'Header'), h('pre', { id: 'token-header' }, JSON.stringify(minted.header, null, 2))),
      h('div', {}, h('h3', {}, 'Claims'), h('pre', { id: 'token-claims' }, JSON.stringify({ ...minted.claims, ars: undefined }, null, 2)))),
    h('h3', {}, 'Access references (ars)'),
    h('table', { id: 'token-ars' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'r (roles)'), h('th', { scope: 'col' }, 'c (references)'), h('th', { scope: 'col' }, 'n (nodes)'))),
      h('tbody', {}, ...ars.map((a) => h('tr', {}, h('td', {}, a.r.join(', ')), h('td', {}, (a.c ?? []).join(', ')), h('td', {}, (a.n ?? []).join(', ')))))),
    h('h3', {}, 'Try it against the example service'),
    h('div', { class: 'row' }, field('curl-method', 'Method', method), field('curl-url', 'URL', url)),
    curl,
    h('div', { class: 'row' }, copyButton('copy-curl', 'Copy curl line', curlLine)),
  ];
}

const REASONS: Record<string, (d: Decision, service: string, permission: string) => string> = {
  GRANTED: (d) => `role ${d.grantedBy?.role ?? '?'} grants ${d.grantedBy?.permission ?? '?'} on ${d.grantedBy?.service ?? '?'}`,
  NO_MATCHING_REFERENCE: (d) => `no access reference of the token names ${d.reference}, so it holds no role for it`,
  ROLE_NOT_IN_POLICY: (d) => `the token's roles for ${d.reference} (${d.roles.join(', ')}) are not roles of the application's policy`,
  NO_SERVICE_POLICY: (d, s) => `none of the roles ${d.roles.join(', ')} has permissions for service ${s}`,
  PERMISSION_NOT_GRANTED: (d, s, p) => `the roles ${d.roles.join(', ')} have permissions for ${s}, but not ${p}`,
  INVALID_RESOURCE: () => 'the resource is not a usable reference',
};

function decisionsView(): HTMLElement {
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

// ---------------------------------------------------------------- start

async function start(): Promise<void> {
  const session = await api<{ csrfToken: string }>('GET', 'session');
  state.csrf = session.data.csrfToken;
  await loadAll();
  for (const tab of document.querySelectorAll<HTMLButtonElement>('nav button')) {
    tab.addEventListener('click', () => {
      state.view = tab.dataset.view as View;
      clearMessage();
      render();
      byId('main').focus();
    });
  }
  (byId('app-select') as HTMLSelectElement).addEventListener('change', (event) => {
    state.app = (event.target as HTMLSelectElement).value;
    render();
  });
  byId('save').addEventListener('click', () => { void save(); });
  byId('discard').addEventListener('click', () => {
    state.draft = structuredClone(state.saved);
    clearMessage();
    render();
  });
  window.addEventListener('beforeunload', (event) => { if (isDirty()) event.preventDefault(); });
  render();
  document.body.dataset.ready = 'true';
}

void start().catch((error: unknown) => {
  say('error', `The console could not start: ${error instanceof Error ? error.message : String(error)}`);
});
