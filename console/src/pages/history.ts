/**
 * Query history (`GET /api/query-history`): the caller's queries, everyone's for administrators,
 * filtered by status, user, type; paged; one query's full record; re-open its SQL in the editor.
 */
import { h, field, replaceChildren } from '../dom.js';
import type { Page, PageContext } from '../app.js';

type HistoryRow = Record<string, unknown> & { queryId: string; status: string; sql: string };
const PAGE_SIZE = 50;
const STATUSES = ['', 'queued', 'running', 'completed', 'failed', 'cancelled'];

export const historyPage: Page = {
  title: 'Query history',
  async render(ctx) {
    const id = ctx.path[0];
    return id ? detail(ctx, id) : list(ctx);
  },
};

async function list(ctx: PageContext): Promise<HTMLElement> {
  const p = ctx.params;
  const offset = Math.max(0, Number(p.get('offset') ?? 0) || 0);
  const q = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
  for (const k of ['status', 'user_id', 'query_type']) { const v = p.get(k); if (v) q.set(k, v); }
  const rows = await ctx.api.getJson<HistoryRow[]>(`/api/query-history?${q}`);
  const since = p.get('since') ?? '';
  const until = p.get('until') ?? '';
  // The time range is applied to the page the server answered (the endpoint filters by status, user and type).
  const shown = rows.filter((r) => {
    const at = String(r.queuedAt ?? '');
    return (!since || at >= new Date(since).toISOString()) && (!until || at <= new Date(until).toISOString());
  });
  const status = h('select', { name: 'status' }, STATUSES.map((s) => h('option', { value: s }, s || 'any')));
  status.value = p.get('status') ?? '';
  const user = h('input', { name: 'user_id', value: p.get('user_id') ?? '', placeholder: 'user id' });
  const type = h('input', { name: 'query_type', value: p.get('query_type') ?? '', placeholder: 'e.g. SELECT' });
  const from = h('input', { name: 'since', type: 'datetime-local', value: since });
  const to = h('input', { name: 'until', type: 'datetime-local', value: until });
  const go = (off: number) => {
    const next = new URLSearchParams();
    if (status.value) next.set('status', status.value);
    if (user.value.trim()) next.set('user_id', user.value.trim());
    if (type.value.trim()) next.set('query_type', type.value.trim());
    if (from.value) next.set('since', from.value);
    if (to.value) next.set('until', to.value);
    if (off > 0) next.set('offset', String(off));
    ctx.navigate(`#/history?${next}`);
  };
  const filters = h('form', { class: 'row filters', onsubmit: (e: Event) => { e.preventDefault(); go(0); } },
    field('Status', status), field('User', user), field('Type', type), field('From', from), field('To', to), h('button', { type: 'submit' }, 'Filter'));
  const table = h('table', { class: 'data' },
    h('caption', { class: 'visually-hidden' }, 'Queries'),
    h('thead', {}, h('tr', {}, ['Query', 'Status', 'User', 'Type', 'Queued', 'Duration (ms)', 'Rows', 'SQL'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, shown.map((r) => h('tr', {},
      h('td', {}, h('a', { href: `#/history/${encodeURIComponent(r.queryId)}` }, r.queryId)),
      h('td', {}, r.status), h('td', {}, String(r.userName ?? '')), h('td', {}, String(r.queryType ?? '')),
      h('td', {}, String(r.queuedAt ?? '')), h('td', { class: 'num' }, String(r.durationMs ?? '')), h('td', { class: 'num' }, String(r.rowsProduced ?? '')),
      h('td', { class: 'sql' }, r.sql.length > 120 ? `${r.sql.slice(0, 120)}…` : r.sql)))));
  return h('section', { 'aria-labelledby': 'history-h' },
    h('h1', { id: 'history-h' }, 'Query history'), filters,
    shown.length === 0 ? h('p', {}, 'No queries match.') : table,
    h('nav', { class: 'row', 'aria-label': 'Pages' },
      h('button', { type: 'button', class: 'secondary', disabled: offset === 0, onclick: () => go(Math.max(0, offset - PAGE_SIZE)) }, 'Previous page'),
      h('span', {}, `Queries ${offset + 1}–${offset + rows.length}`),
      h('button', { type: 'button', class: 'secondary', disabled: rows.length < PAGE_SIZE, onclick: () => go(offset + PAGE_SIZE) }, 'Next page')));
}

async function detail(ctx: PageContext, id: string): Promise<HTMLElement> {
  const r = await ctx.api.getJson<HistoryRow>(`/api/query-history/${encodeURIComponent(id)}`);
  const box = h('section', { 'aria-labelledby': 'query-h' });
  replaceChildren(box,
    h('h1', { id: 'query-h' }, `Query ${r.queryId}`),
    h('div', { class: 'row' },
      h('button', { type: 'button', onclick: () => ctx.navigate(`#/sql?${new URLSearchParams({ sql: r.sql })}`) }, 'Open in editor'),
      h('a', { href: '#/history' }, 'Back to history')),
    h('pre', { class: 'secret' }, r.sql),
    h('table', { class: 'data' }, h('tbody', {}, Object.entries(r).filter(([k]) => k !== 'sql').map(([k, v]) =>
      h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v === null ? '' : String(v)))))));
  return box;
}
