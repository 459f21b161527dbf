/** The Actors view: each actor's IdP subject, account and application, and per tenant its access references. */
import { button, field, h, list, select, textInput } from './dom.js';
import { say } from './messages.js';
import { render } from './render.js';
import { updateDirty } from './savebar.js';
import { state } from './state.js';

/** Local checks while typing (the server's validation follows): why a list field is wrong, or ''. */
function listMistake(kind: 'r' | 'c' | 'n', values: string[]): string {
  if (kind === 'r' && values.length === 0) return 'at least one role';
  if (kind === 'c') {
    const bad = values.find((v) => !/^[^=]+=.+$/.test(v));
    if (bad !== undefined) return `"${bad}" is not TYPE=value`;
  }
  return '';
}

export function actorsView(): HTMLElement {
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
