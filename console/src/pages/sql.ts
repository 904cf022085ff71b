/**
 * The SQL editor: a script with highlighting (the grammar's keywords) and keyword completion
 * (Ctrl+Space), run the selection or the statement at the cursor (Ctrl+Enter), cancel (which aborts
 * the request; the server cancels the statement when its client goes), the workload class
 * override, a virtualized result grid (values shown exactly as the server sent them: BIGINT and
 * DECIMAL as strings), elapsed time and query id, errors with their line and column marked in the
 * editor, and CSV download.
 */
import { ApiError, type QueryAnswer } from '../api.js';
import { alertBox, field, h, replaceChildren } from '../dom.js';
import type { Page } from '../app.js';
import { completions, errorPosition, offsetOf, splitStatements, statementAt, tokenize, toCsv } from '../sql-text.js';
import { showError } from './errors.js';

/** What the editor keeps while the console is open (not across reloads). */
export interface Workspace {
  text: string;
  workloadClass: string;
  /** The `session` the last answer returned (USE, SET), sent back with the next statement. */
  session: unknown;
  last: QueryAnswer | undefined;
}

export function newWorkspace(): Workspace {
  return { text: 'SELECT 1 AS one;\n', workloadClass: '', session: undefined, last: undefined };
}

const ROW_HEIGHT = 26;

export function sqlPage(ws: Workspace): Page {
  return {
    title: 'SQL',
    render(ctx) {
      const fromHistory = ctx.params.get('sql');
      if (fromHistory !== null) ws.text = fromHistory;
      const textarea = h('textarea', { id: 'sql-editor', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off', rows: 10, 'aria-describedby': 'sql-help', 'data-autofocus': true });
      textarea.value = ws.text;
      const highlight = h('pre', { class: 'highlight', 'aria-hidden': 'true' });
      const suggestions = h('div', { class: 'hint', role: 'status', 'aria-live': 'polite' });
      let errorAt: number | undefined;
      const paint = () => {
        const nodes: Node[] = [];
        let offset = 0;
        for (const tok of tokenize(textarea.value)) {
          if (errorAt !== undefined && errorAt >= offset && errorAt < offset + tok.text.length) {
            const cut = errorAt - offset;
            if (cut > 0) nodes.push(h('span', { class: `t-${tok.kind}` }, tok.text.slice(0, cut)));
            nodes.push(h('mark', { class: 'err' }, tok.text.slice(cut, cut + 1)));
            if (cut + 1 < tok.text.length) nodes.push(h('span', { class: `t-${tok.kind}` }, tok.text.slice(cut + 1)));
          } else nodes.push(tok.kind === 'other' || tok.kind === 'ident' ? document.createTextNode(tok.text) : h('span', { class: `t-${tok.kind}` }, tok.text));
          offset += tok.text.length;
        }
        if (errorAt !== undefined && errorAt >= textarea.value.length) nodes.push(h('mark', { class: 'err' }, ' '));
        nodes.push(document.createTextNode('\n'));
        highlight.replaceChildren(...nodes);
        highlight.scrollTop = textarea.scrollTop;
        highlight.scrollLeft = textarea.scrollLeft;
      };
      textarea.addEventListener('input', () => { ws.text = textarea.value; errorAt = undefined; paint(); });
      textarea.addEventListener('scroll', () => { highlight.scrollTop = textarea.scrollTop; highlight.scrollLeft = textarea.scrollLeft; });
      textarea.addEventListener('keydown', (e) => {
        if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
          e.preventDefault();
          void run();
        } else if (e.ctrlKey && e.key === ' ') {
          e.preventDefault();
          complete();
        }
      });
      const complete = () => {
        const pos = textarea.selectionStart;
        const prefix = /[A-Za-z_]+$/.exec(textarea.value.slice(0, pos))?.[0] ?? '';
        const options = completions(prefix);
        suggestions.textContent = options.length > 0 ? `Keywords: ${options.join(', ')}` : 'No keyword completes this';
        const first = options[0];
        if (!first) return;
        textarea.setRangeText(`${first} `, pos - prefix.length, pos, 'end');
        ws.text = textarea.value;
        paint();
      };

      const workload = h('select', { name: 'workload' },
        h('option', { value: '' }, 'automatic'), h('option', { value: 'interactive' }, 'interactive'),
        h('option', { value: 'medium' }, 'medium'), h('option', { value: 'batch' }, 'batch'));
      workload.value = ws.workloadClass;
      workload.addEventListener('change', () => { ws.workloadClass = workload.value; });
      const runButton = h('button', { type: 'button', onclick: () => void run() }, 'Run');
      const cancelButton = h('button', { type: 'button', class: 'danger', disabled: true }, 'Cancel');
      const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
      const error = alertBox(undefined);
      const results = h('div', { class: 'results' });

      let inFlight: AbortController | undefined;
      cancelButton.addEventListener('click', () => inFlight?.abort());

      const run = async () => {
        if (inFlight) return;
        const selected = textarea.value.slice(textarea.selectionStart, textarea.selectionEnd);
        const base = selected.trim() !== '' ? textarea.selectionStart : 0;
        const statements = selected.trim() !== ''
          ? splitStatements(selected).map((s) => ({ ...s, start: s.start + base }))
          : [statementAt(textarea.value, textarea.selectionStart)].filter((s) => s !== undefined);
        if (statements.length === 0) return;
        error.hidden = true;
        errorAt = undefined;
        paint();
        inFlight = new AbortController();
        runButton.disabled = true;
        cancelButton.disabled = false;
        const started = performance.now();
        try {
          for (const stmt of statements) {
            status.textContent = 'Running…';
            const settings = ws.workloadClass ? { 'svc.workload_class': ws.workloadClass } : undefined;
            const session = mergeSession(ws.session, settings);
            const answer = await ctx.api.query(stmt.text, { signal: inFlight.signal, ...(session ? { session } : {}) });
            if (answer.session) ws.session = answer.session;
            ws.last = answer;
            showResult(results, answer);
            status.textContent = `${answer.row_count} row${answer.row_count === 1 ? '' : 's'} · ${answer.elapsed_ms} ms on the server · query id ${answer.query_id}`;
          }
        } catch (e) {
          if (e instanceof DOMException && e.name === 'AbortError') {
            status.textContent = `Cancelled after ${Math.round(performance.now() - started)} ms`;
          } else {
            status.textContent = '';
            showError(error, e);
            if (e instanceof ApiError && e.queryId) error.append(` (query id ${e.queryId})`);
            const pos = e instanceof ApiError ? e.position ?? errorPosition(e.message) : undefined;
            const stmt = statements[0]!;
            if (pos) {
              errorAt = stmt.start + offsetOf(stmt.text, pos.line, pos.column);
              paint();
              textarea.setSelectionRange(errorAt, errorAt);
            }
          }
        } finally {
          inFlight = undefined;
          runButton.disabled = false;
          cancelButton.disabled = true;
        }
      };

      paint();
      if (ws.last) showResult(results, ws.last);
      return h('section', { 'aria-labelledby': 'sql-h' },
        h('h1', { id: 'sql-h' }, 'SQL'),
        h('label', { for: 'sql-editor', class: 'visually-hidden' }, 'SQL script'),
        h('div', { class: 'editor' }, highlight, textarea),
        h('p', { id: 'sql-help', class: 'hint' }, 'Ctrl+Enter runs the selection, or the statement at the cursor. Ctrl+Space completes a keyword.'),
        suggestions,
        h('div', { class: 'row toolbar' }, runButton, cancelButton, field('Workload class', workload)),
        status, error, results);
    },
  };
}

function mergeSession(carried: unknown, settings: Record<string, string> | undefined): unknown {
  if (!settings) return carried;
  const base = (carried && typeof carried === 'object' ? carried : {}) as { settings?: Record<string, string> };
  return { ...base, settings: { ...(base.settings ?? {}), ...settings } };
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The result grid: only the rows in view are in the DOM, so 100k rows scroll smoothly. */
export function showResult(container: HTMLElement, answer: QueryAnswer): void {
  const download = h('button', {
    type: 'button', class: 'secondary',
    onclick: () => {
      const blob = new Blob([toCsv(answer.columns, answer.rows)], { type: 'text/csv' });
      const a = h('a', { href: URL.createObjectURL(blob), download: `floe-${answer.query_id}.csv` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    },
  }, 'Download CSV');
  const head = h('thead', {}, h('tr', { 'aria-rowindex': 1 }, answer.columns.map((c, i) => h('th', { scope: 'col', title: answer.types[i] ?? '' }, c, h('span', { class: 'type' }, ` ${answer.types[i] ?? ''}`)))));
  const body = h('tbody');
  const table = h('table', { class: 'data grid', 'aria-rowcount': answer.rows.length + 1, 'aria-colcount': answer.columns.length }, head, body);
  const spacer = h('div', { class: 'spacer' });
  const scroller = h('div', { class: 'grid-scroll', tabindex: 0, role: 'region', 'aria-label': `Results, ${answer.rows.length} rows` }, spacer, table);
  spacer.style.height = `${(answer.rows.length + 1) * ROW_HEIGHT}px`;
  let first = -1;
  const draw = () => {
    const visible = Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 10;
    const start = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - 5);
    if (start === first) return;
    first = start;
    const rows = answer.rows.slice(start, start + visible).map((r, i) =>
      h('tr', { 'aria-rowindex': start + i + 2 }, r.map((v) => h('td', { class: v === null ? 'null' : typeof v === 'number' || /^-?\d+(\.\d+)?$/.test(String(v)) ? 'num' : '' }, cellText(v)))));
    body.replaceChildren(...rows);
    table.style.transform = `translateY(${start * ROW_HEIGHT}px)`;
  };
  scroller.addEventListener('scroll', () => requestAnimationFrame(draw));
  replaceChildren(container, h('div', { class: 'row' }, download), scroller);
  requestAnimationFrame(draw);
  draw();
}
