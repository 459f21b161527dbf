/** The Tokens view: mint a token for an actor, show it decoded, and a curl line to try it against the example service. */
import { api } from './api.js';
import { curlCommand } from './curl.js';
import { button, byId, field, h, select } from './dom.js';
import { clearMessage, say } from './messages.js';
import { render } from './render.js';
import { state } from './state.js';
import type { AccessReference, Minted } from './types.js';

export function tokensView(): HTMLElement {
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

function mintedOutput(minted: Minted): HTMLElement[] {
  const token = h('textarea', { rows: 4, readonly: true }, minted.token) as HTMLTextAreaElement;
  const ars = Array.isArray(minted.claims.ars) ? (minted.claims.ars as AccessReference[]) : [];
  const firstRef = ars.flatMap((a) => a.c ?? [])[0] ?? 'VIN=WVW1';
  const value = firstRef.slice(firstRef.indexOf('=') + 1) || 'WVW1';
  // The reference's value is one path segment, whatever it holds (spaces, '/', '?', '&').
  const url = h('input', { type: 'text', value: `http://127.0.0.1:3000/vehicle/${encodeURIComponent(value)}` }) as HTMLInputElement;
  const method = select(['GET', 'PUT'], 'GET', () => { curl.textContent = curlLine(); });
  const curl = h('pre', { id: 'curl-line', 'aria-live': 'polite' });
  const curlLine = () => curlCommand(method.value, url.value, minted.token);
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
