/**
 * Administration, by privilege, through the same SQL statements any client runs (`POST
 * /api/query`), so the console adds no path around authorization: what the server refuses, the
 * page shows as an error. Users (create, invite with the link shown once, suspend, unlock, rename,
 * drop and undrop, legal hold), service accounts and keypairs, personal access tokens (shown once
 * at creation), webhooks (the secret is never shown), resource groups and QoS, the audit log.
 */
import { sqlIdent, sqlString, type QueryAnswer } from '../api.js';
import { alertBox, field, h, replaceChildren, type Child } from '../dom.js';
import type { Page, PageContext } from '../app.js';
import { showError } from './errors.js';

const SECTIONS: readonly (readonly [string, string])[] = [
  ['users', 'Users'], ['service-accounts', 'Service accounts'], ['pats', 'Access tokens'],
  ['webhooks', 'Webhooks'], ['resource-groups', 'Resource groups'], ['audit', 'Audit log'],
];

type Action = { readonly label: string; readonly sql: (row: Record<string, unknown>) => string | undefined };

export const adminPage: Page = {
  title: 'Administration',
  async render(ctx) {
    const section = ctx.path[0] ?? 'users';
    const body = h('div', { class: 'admin-body' });
    const message = alertBox(undefined);
    const nav = h('nav', { 'aria-label': 'Administration' }, h('ul', { class: 'tabs' }, SECTIONS.map(([id, label]) =>
      h('li', {}, h('a', { href: `#/admin/${id}`, ...(id === section ? { 'aria-current': 'page' } : {}) }, label)))));
    const tools: Tools = {
      ctx, message,
      run: async (sql) => {
        message.hidden = true;
        try {
          return await ctx.api.query(sql);
        } catch (e) {
          showError(message, e);
          return undefined;
        }
      },
      reload: () => void renderSection(section, tools, body),
    };
    await renderSection(section, tools, body);
    return h('section', { 'aria-labelledby': 'admin-h' }, h('h1', { id: 'admin-h' }, 'Administration'), nav, message, body);
  },
};

interface Tools {
  readonly ctx: PageContext;
  readonly message: HTMLElement;
  run(sql: string): Promise<QueryAnswer | undefined>;
  reload(): void;
}

async function renderSection(section: string, tools: Tools, body: HTMLElement): Promise<void> {
  switch (section) {
    case 'users': return users(tools, body);
    case 'service-accounts': return serviceAccounts(tools, body);
    case 'pats': return pats(tools, body);
    case 'webhooks': return webhooks(tools, body);
    case 'resource-groups': return resourceGroups(tools, body);
    case 'audit': return listing(tools, body, 'Audit log', 'SELECT * FROM system.audit_log LIMIT 200', []);
    default: replaceChildren(body, h('p', {}, `No section ${section}.`));
  }
}

function rowsOf(a: QueryAnswer): Record<string, unknown>[] {
  return a.rows.map((r) => Object.fromEntries(a.columns.map((c, i) => [c, r[i]])));
}

/** A SHOW statement's rows as a table, with buttons that run a statement on a row. */
async function listing(tools: Tools, body: HTMLElement, title: string, sql: string, actions: readonly Action[], before: Child = null): Promise<void> {
  const a = await tools.run(sql);
  const rows = a ? rowsOf(a) : [];
  const table = a && h('table', { class: 'data' },
    h('caption', {}, title),
    h('thead', {}, h('tr', {}, a.columns.map((c) => h('th', { scope: 'col' }, c)), actions.length > 0 ? h('th', { scope: 'col' }, 'Actions') : null)),
    h('tbody', {}, rows.map((row) => h('tr', {},
      a.columns.map((c) => h('td', {}, row[c] === null || row[c] === undefined ? '' : typeof row[c] === 'object' ? JSON.stringify(row[c]) : String(row[c]))),
      actions.length > 0 ? h('td', { class: 'row' }, actions.map((act) => {
        const stmt = act.sql(row);
        return stmt === undefined ? null : h('button', {
          type: 'button', class: 'secondary small', 'aria-label': `${act.label} ${String(row.name ?? '')}`,
          onclick: async () => { if (await tools.run(stmt)) tools.reload(); },
        }, act.label);
      })) : null))));
  replaceChildren(body, before, table ?? null, a && rows.length === 0 ? h('p', {}, 'None.') : null);
}

/** A small form whose submit runs the SQL `build` makes from its inputs; `after` sees the answer. */
function createForm(title: string, inputs: readonly (readonly [string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, string?])[],
  build: () => string, tools: Tools, after: (a: QueryAnswer) => Child): HTMLElement {
  const out = h('div');
  const submit = h('button', { type: 'submit' }, title);
  return h('form', {
    class: 'card create',
    'aria-label': title,
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        const a = await tools.run(build());
        if (a) replaceChildren(out, after(a));
      } finally {
        submit.disabled = false;
      }
    },
  }, h('h2', {}, title), h('div', { class: 'row' }, inputs.map(([label, input, hint]) => field(label, input, hint))), submit, out);
}

/** A secret shown this once (invitation link, PAT): the server keeps only its hash. */
function shownOnce(label: string, value: string): HTMLElement {
  return h('div', { class: 'alert info', role: 'status' }, `${label} (shown only this once; copy it now): `, h('code', { class: 'secret', 'data-testid': 'shown-once' }, value));
}

async function users(tools: Tools, body: HTMLElement): Promise<void> {
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const email = h('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'new-password' });
  const form = createForm('Create user', [['User name', name], ['E-mail', email], ['Password', password, 'Leave empty to invite']],
    () => `CREATE USER ${sqlIdent(name.value.trim())} EMAIL = ${sqlString(email.value.trim())}${password.value ? ` PASSWORD = ${sqlString(password.value)}` : ''}`,
    tools, (a) => {
      const r = rowsOf(a)[0] ?? {};
      return [h('p', {}, `User ${String(r.name)} created (${String(r.status)}).`), r.invitation_url ? shownOnce('Invitation link', String(r.invitation_url)) : null,
        h('button', { type: 'button', class: 'secondary', onclick: () => tools.reload() }, 'Refresh the list')];
    });
  await listing(tools, body, 'Users', 'SHOW USERS', [
    { label: 'Suspend', sql: (r) => (r.status !== 'SUSPENDED' && r.status !== 'DEACTIVATED' ? `ALTER USER ${sqlIdent(String(r.name))} SUSPEND` : undefined) },
    { label: 'Unsuspend', sql: (r) => (r.status === 'SUSPENDED' ? `ALTER USER ${sqlIdent(String(r.name))} UNSUSPEND` : undefined) },
    { label: 'Unlock', sql: (r) => (r.locked === true ? `ALTER USER ${sqlIdent(String(r.name))} UNLOCK` : undefined) },
    { label: 'Drop', sql: (r) => (r.status !== 'DEACTIVATED' ? `DROP USER ${sqlIdent(String(r.name))}` : undefined) },
    { label: 'Undrop', sql: (r) => (r.status === 'DEACTIVATED' ? `UNDROP USER ${sqlIdent(String(r.name))}` : undefined) },
    { label: 'Set legal hold', sql: (r) => (r.legal_hold === true ? undefined : `ALTER USER ${sqlIdent(String(r.name))} SET LEGAL HOLD REASON 'set in the console'`) },
    { label: 'Clear legal hold', sql: (r) => (r.legal_hold === true ? `ALTER USER ${sqlIdent(String(r.name))} CLEAR LEGAL HOLD` : undefined) },
  ], [form, renameForm(tools)]);
}

function renameForm(tools: Tools): HTMLElement {
  const from = h('input', { name: 'from', required: true, autocomplete: 'off' });
  const to = h('input', { name: 'to', required: true, autocomplete: 'off' });
  return createForm('Rename user', [['Current name', from], ['New name', to]],
    () => `ALTER USER ${sqlIdent(from.value.trim())} RENAME TO ${sqlIdent(to.value.trim())}`, tools, () => { tools.reload(); return null; });
}

async function serviceAccounts(tools: Tools, body: HTMLElement): Promise<void> {
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const create = createForm('Create service account', [['Name', name]], () => `CREATE SERVICE ACCOUNT ${sqlIdent(name.value.trim())}`, tools, () => { tools.reload(); return null; });
  const account = h('input', { name: 'account', required: true, autocomplete: 'off' });
  const kid = h('input', { name: 'kid', required: true, autocomplete: 'off' });
  const pem = h('textarea', { name: 'pem', required: true, rows: 3 });
  const alg = h('select', { name: 'alg' }, ['RS256', 'RS512', 'ES256', 'ES384'].map((a) => h('option', { value: a }, a)));
  const keypair = createForm('Add keypair', [['Service account', account], ['Key id', kid], ['Public key (PEM)', pem], ['Algorithm', alg]],
    () => `ALTER SERVICE ACCOUNT ${sqlIdent(account.value.trim())} ADD KEYPAIR KEY_ID ${sqlString(kid.value.trim())} PUBLIC_KEY ${sqlString(pem.value.trim())} ALGORITHM ${alg.value}`,
    tools, (a) => h('p', {}, `Keypair added: ${JSON.stringify(rowsOf(a)[0] ?? {})}`));
  await listing(tools, body, 'Service accounts', 'SHOW SERVICE ACCOUNTS', [
    { label: 'Drop', sql: (r) => `DROP SERVICE ACCOUNT ${sqlIdent(String(r.name))}` },
  ], [create, keypair]);
}

async function pats(tools: Tools, body: HTMLElement): Promise<void> {
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const days = h('input', { name: 'days', type: 'number', min: 1, max: 365, value: 30 });
  const scope = h('input', { name: 'scope', autocomplete: 'off', placeholder: 'sql catalog:read …' });
  const create = createForm('Create access token', [['Name', name], ['Days valid', days], ['Scopes', scope, 'Empty: the default']],
    () => `CREATE PERSONAL ACCESS TOKEN ${sqlIdent(name.value.trim())} TTL ${sqlString(`${Number(days.value) || 30} days`)}${scope.value.trim() ? ` SCOPE ${sqlString(scope.value.trim())}` : ''}`,
    tools, (a) => {
      const r = rowsOf(a)[0] ?? {};
      return [shownOnce(`Token ${String(r.name)}`, String(r.token)), h('button', { type: 'button', class: 'secondary', onclick: () => tools.reload() }, 'Refresh the list')];
    });
  await listing(tools, body, 'Personal access tokens', 'SHOW PERSONAL ACCESS TOKENS', [
    { label: 'Revoke', sql: (r) => `DROP PERSONAL ACCESS TOKEN ${sqlIdent(String(r.name))}` },
  ], create);
}

async function webhooks(tools: Tools, body: HTMLElement): Promise<void> {
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const url = h('input', { name: 'url', type: 'url', required: true, autocomplete: 'off' });
  const secret = h('input', { name: 'secret', type: 'password', required: true, autocomplete: 'off', minlength: 16 });
  const events = h('input', { name: 'events', autocomplete: 'off', placeholder: 'user., pat.create' });
  const create = createForm('Create webhook', [['Name', name], ['URL', url], ['Signing secret', secret, 'At least 16 characters; never shown again'], ['Events', events, 'Comma-separated names or prefixes; empty: all']],
    () => `CREATE WEBHOOK ${sqlIdent(name.value.trim())} URL = ${sqlString(url.value.trim())} SECRET = ${sqlString(secret.value)}${events.value.trim() ? ` EVENTS (${events.value.split(',').map((e) => sqlString(e.trim())).join(', ')})` : ''}`,
    tools, () => { tools.reload(); return null; });
  await listing(tools, body, 'Webhooks', 'SHOW WEBHOOKS', [{ label: 'Drop', sql: (r) => `DROP WEBHOOK ${sqlIdent(String(r.name))}` }], create);
}

async function resourceGroups(tools: Tools, body: HTMLElement): Promise<void> {
  let stats: unknown;
  try {
    stats = await tools.ctx.api.getJson<unknown>('/api/qos/stats');
  } catch (e) {
    stats = (e as Error).message;
  }
  await listing(tools, body, 'Resource groups', 'SHOW RESOURCE GROUPS', [], null);
  body.append(h('h2', {}, 'QoS statistics'), h('pre', { class: 'secret' }, JSON.stringify(stats, null, 2)));
}
