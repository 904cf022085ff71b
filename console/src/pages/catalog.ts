/**
 * The catalog browser, over the Iceberg REST routes (`/v1`) with the console's token: catalogs →
 * namespaces → tables and views; a table page with its schema (nested types, field ids), partition
 * spec, properties, snapshots and refs (each with a time-travel query link), row and file counts,
 * and a preview of its first 100 rows. Snapshot ids stay exact (`getJsonExact`).
 */
import { sqlIdent } from '../api.js';
import { h, replaceChildren, type Child } from '../dom.js';
import type { Page, PageContext } from '../app.js';
import { showError } from './errors.js';
import { showResult } from './sql.js';

const SEP = '\u001f';

interface Field { id: number; name: string; required: boolean; type: IcebergType; doc?: string }
type IcebergType = string | { type: 'struct'; fields: Field[] } | { type: 'list'; 'element-id': number; element: IcebergType; 'element-required': boolean } | { type: 'map'; 'key-id': number; key: IcebergType; 'value-id': number; value: IcebergType };
interface Snapshot { 'snapshot-id': string | number; 'parent-snapshot-id'?: string | number; 'timestamp-ms': number; summary?: Record<string, string> }
interface TableMetadata {
  'format-version': number; 'table-uuid': string; location: string;
  'current-schema-id': number; schemas: { 'schema-id': number; fields: Field[] }[];
  'default-spec-id': number; 'partition-specs': { 'spec-id': number; fields: { name: string; transform: string; 'source-id': number; 'field-id': number }[] }[];
  properties?: Record<string, string>; 'current-snapshot-id'?: string | number | null; snapshots?: Snapshot[];
  refs?: Record<string, { 'snapshot-id': string | number; type: string }>;
}

const enc = encodeURIComponent;
const nsPath = (ns: readonly string[]) => enc(ns.join(SEP));
const link = (parts: readonly string[]) => `#/catalog/${parts.map(enc).join('/')}`;

export const catalogPage: Page = {
  title: 'Catalog',
  async render(ctx) {
    const [catalog, ns, table, kind] = ctx.path;
    const crumbs = breadcrumbs(catalog, ns, table);
    let body: Child;
    if (!catalog) body = await catalogs(ctx);
    else if (ns === undefined) body = await namespaces(ctx, catalog, undefined);
    else if (table === undefined) body = await namespaces(ctx, catalog, ns.split(SEP));
    else if (kind === 'view') body = await viewPage(ctx, catalog, ns.split(SEP), table);
    else body = await tablePage(ctx, catalog, ns.split(SEP), table);
    return h('section', { 'aria-labelledby': 'catalog-h' }, crumbs, body);
  },
};

function breadcrumbs(catalog?: string, ns?: string, table?: string): HTMLElement {
  const items: Child[] = [h('li', {}, h('a', { href: '#/catalog' }, 'Catalogs'))];
  if (catalog) items.push(h('li', {}, h('a', { href: link([catalog]) }, catalog)));
  if (catalog && ns) items.push(h('li', {}, h('a', { href: link([catalog, ns]) }, ns.split(SEP).join('.'))));
  if (table) items.push(h('li', {}, table));
  return h('nav', { 'aria-label': 'Breadcrumb', class: 'crumbs' }, h('ol', {}, items));
}

async function catalogs(ctx: PageContext): Promise<Child> {
  const r = await ctx.api.getJson<{ catalogs: { name: string; 'warehouse-location': string }[] }>('/v1/catalogs');
  return [h('h1', { id: 'catalog-h' }, 'Catalogs'),
    h('ul', { class: 'listing' }, r.catalogs.map((c) => h('li', {}, h('a', { href: link([c.name]) }, c.name), h('span', { class: 'hint' }, ` ${c['warehouse-location']}`))))];
}

async function namespaces(ctx: PageContext, catalog: string, ns: string[] | undefined): Promise<Child> {
  const base = `/v1/${enc(catalog)}/namespaces`;
  const children = await ctx.api.getJson<{ namespaces: string[][] }>(`${base}${ns ? `?parent=${nsPath(ns)}` : ''}`);
  const tables = ns ? await ctx.api.getJson<{ identifiers: { name: string }[] }>(`${base}/${nsPath(ns)}/tables`) : { identifiers: [] };
  const views = ns ? await ctx.api.getJson<{ identifiers: { name: string }[] }>(`${base}/${nsPath(ns)}/views`) : { identifiers: [] };
  return [
    h('h1', { id: 'catalog-h' }, ns ? `Namespace ${ns.join('.')}` : `Catalog ${catalog}`),
    h('h2', {}, 'Namespaces'),
    children.namespaces.length === 0 ? h('p', {}, 'None.') : h('ul', { class: 'listing' }, children.namespaces.map((n) => h('li', {}, h('a', { href: link([catalog, n.join(SEP)]) }, n.join('.'))))),
    ns ? [h('h2', {}, 'Tables'), tables.identifiers.length === 0 ? h('p', {}, 'None.') : h('ul', { class: 'listing' }, tables.identifiers.map((t) => h('li', {}, h('a', { href: link([catalog, ns.join(SEP), t.name]) }, t.name)))),
      h('h2', {}, 'Views'), views.identifiers.length === 0 ? h('p', {}, 'None.') : h('ul', { class: 'listing' }, views.identifiers.map((v) => h('li', {}, h('a', { href: link([catalog, ns.join(SEP), v.name, 'view']) }, v.name))))] : null,
  ];
}

function typeText(t: IcebergType): string {
  if (typeof t === 'string') return t;
  switch (t.type) {
    case 'struct': return `struct<${t.fields.map((f) => `${f.name}: ${typeText(f.type)}`).join(', ')}>`;
    case 'list': return `list<${typeText(t.element)}>`;
    case 'map': return `map<${typeText(t.key)}, ${typeText(t.value)}>`;
  }
}

/** Schema rows, nested fields indented under their parent (struct fields, list elements, map keys and values). */
function schemaRows(fields: readonly Field[], depth: number): HTMLElement[] {
  const rows: HTMLElement[] = [];
  const row = (id: number, name: string, type: IcebergType, required: boolean, d: number, doc?: string) => {
    rows.push(h('tr', {}, h('td', { class: 'num' }, id), h('th', { scope: 'row', class: `depth-${Math.min(d, 5)}` }, name), h('td', {}, typeText(type)), h('td', {}, required ? 'required' : 'optional'), h('td', {}, doc ?? '')));
    if (typeof type === 'string') return;
    if (type.type === 'struct') rows.push(...schemaRows(type.fields, d + 1));
    else if (type.type === 'list') row(type['element-id'], 'element', type.element, type['element-required'], d + 1);
    else { row(type['key-id'], 'key', type.key, true, d + 1); row(type['value-id'], 'value', type.value, false, d + 1); }
  };
  for (const f of fields) row(f.id, f.name, f.type, f.required, depth, f.doc);
  return rows;
}

function qualified(catalog: string, ns: readonly string[], table: string): string {
  return [catalog, ...ns, table].map(sqlIdent).join('.');
}

function keyValues(caption: string, entries: readonly [string, Child][]): HTMLElement {
  return h('table', { class: 'data' }, h('caption', {}, caption), h('tbody', {}, entries.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v)))));
}

async function tablePage(ctx: PageContext, catalog: string, ns: string[], table: string): Promise<Child> {
  const r = await ctx.api.getJsonExact<{ metadata: TableMetadata; 'metadata-location': string }>(`/v1/${enc(catalog)}/namespaces/${nsPath(ns)}/tables/${enc(table)}`);
  const m = r.metadata;
  const name = qualified(catalog, ns, table);
  const schema = m.schemas.find((s) => s['schema-id'] === m['current-schema-id']) ?? m.schemas[m.schemas.length - 1]!;
  const spec = m['partition-specs'].find((s) => s['spec-id'] === m['default-spec-id']);
  const current = (m.snapshots ?? []).find((s) => String(s['snapshot-id']) === String(m['current-snapshot-id']));
  const travel = (id: string | number) => `#/sql?${new URLSearchParams({ sql: `SELECT * FROM ${name} FOR VERSION AS OF ${id} LIMIT 100` })}`;
  const preview = h('div', { class: 'results' });
  const previewButton = h('button', {
    type: 'button',
    onclick: async () => {
      previewButton.disabled = true;
      try {
        showResult(preview, await ctx.api.query(`SELECT * FROM ${name} LIMIT 100`));
      } catch (e) {
        const box = h('div');
        preview.replaceChildren(box);
        showError(box, e);
      } finally {
        previewButton.disabled = false;
      }
    },
  }, 'Preview first 100 rows');
  const source = (id: number) => schema.fields.find((f) => f.id === id)?.name ?? String(id);
  return [
    h('h1', { id: 'catalog-h' }, `Table ${[...ns, table].join('.')}`),
    keyValues('Overview', [
      ['Rows', current?.summary?.['total-records'] ?? (current ? '' : '0')],
      ['Data files', current?.summary?.['total-data-files'] ?? (current ? '' : '0')],
      ['Current snapshot', String(m['current-snapshot-id'] ?? 'none')],
      ['Format version', String(m['format-version'])],
      ['Location', m.location],
      ['Table UUID', m['table-uuid']],
    ]),
    h('h2', {}, 'Schema'),
    h('table', { class: 'data schema' }, h('thead', {}, h('tr', {}, ['Field id', 'Name', 'Type', 'Nullability', 'Doc'].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, schemaRows(schema.fields, 0))),
    h('h2', {}, 'Partition spec'),
    !spec || spec.fields.length === 0 ? h('p', {}, 'Unpartitioned.') : h('ul', {}, spec.fields.map((f) => h('li', {}, `${f.name} = ${f.transform}(${source(f['source-id'])}) · field id ${f['field-id']}`))),
    h('h2', {}, 'Snapshots'),
    (m.snapshots ?? []).length === 0 ? h('p', {}, 'No snapshots yet.') : h('table', { class: 'data' },
      h('thead', {}, h('tr', {}, ['Snapshot id', 'Committed', 'Operation', 'Added rows', 'Total rows', 'Time travel'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, [...(m.snapshots ?? [])].reverse().map((s) => h('tr', {},
        h('td', { class: 'num' }, String(s['snapshot-id'])), h('td', {}, new Date(s['timestamp-ms']).toISOString()), h('td', {}, s.summary?.operation ?? ''),
        h('td', { class: 'num' }, s.summary?.['added-records'] ?? ''), h('td', { class: 'num' }, s.summary?.['total-records'] ?? ''),
        h('td', {}, h('a', { href: travel(s['snapshot-id']), 'aria-label': `Query snapshot ${s['snapshot-id']}` }, 'Query snapshot')))))),
    h('h2', {}, 'Refs'),
    Object.keys(m.refs ?? {}).length === 0 ? h('p', {}, 'None.') : h('ul', {}, Object.entries(m.refs ?? {}).map(([ref, v]) =>
      h('li', {}, `${ref} (${v.type}) → ${String(v['snapshot-id'])} `, h('a', { href: travel(v['snapshot-id']), 'aria-label': `Query ${ref}` }, 'Query')))),
    h('h2', {}, 'Properties'),
    Object.keys(m.properties ?? {}).length === 0 ? h('p', {}, 'None.') : keyValues('Table properties', Object.entries(m.properties ?? {}).map(([k, v]) => [k, v])),
    h('h2', {}, 'Data preview'),
    previewButton, preview,
  ];
}

async function viewPage(ctx: PageContext, catalog: string, ns: string[], view: string): Promise<Child> {
  const r = await ctx.api.getJsonExact<{ metadata: { 'current-version-id': number; versions: { 'version-id': number; representations: { sql: string; dialect: string }[] }[]; properties?: Record<string, string> } }>(
    `/v1/${enc(catalog)}/namespaces/${nsPath(ns)}/views/${enc(view)}`);
  const version = r.metadata.versions.find((v) => v['version-id'] === r.metadata['current-version-id']);
  const box = h('div');
  replaceChildren(box,
    h('h1', { id: 'catalog-h' }, `View ${[...ns, view].join('.')}`),
    (version?.representations ?? []).map((rep) => [h('h2', {}, `SQL (${rep.dialect})`), h('pre', { class: 'secret' }, rep.sql)]),
    h('a', { href: `#/sql?${new URLSearchParams({ sql: `SELECT * FROM ${qualified(catalog, ns, view)} LIMIT 100` })}` }, 'Query this view'));
  return box;
}
