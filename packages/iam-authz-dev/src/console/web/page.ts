/**
 * The console page's entry (runs in the browser; the build joins it and the modules it imports into
 * one page.js, see ../page-bundle.ts). It renders one view at a time with DOM calls (never
 * innerHTML) and wires the header: the tabs, the application picker and the save bar. Each view is
 * a module of its own and talks only to the console's JSON API. Minted tokens live in the page's
 * memory and fields — never in localStorage or sessionStorage.
 */
import { actorsView } from './actors-view.js';
import { api, loadAll } from './api.js';
import { decisionsView } from './decisions-view.js';
import { byId, h } from './dom.js';
import { clearMessage, say } from './messages.js';
import { render, setRenderer } from './render.js';
import { rolesView } from './roles-view.js';
import { save, updateDirty } from './savebar.js';
import { servicesView } from './services-view.js';
import { isDirty, state } from './state.js';
import { tokensView } from './tokens-view.js';
import type { View } from './types.js';

/** Rebuilds the header and the current view, keeping keyboard focus on the same control. */
function renderPage(): void {
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

async function start(): Promise<void> {
  setRenderer(renderPage);
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
