/**
 * The subset of SCIM filters (RFC 7644 §3.4.2.2) that identity providers send to find a user
 * before creating it: `userName eq "x"` (Okta, Entra ID), `externalId eq "x"` (Entra ID when
 * matching on objectId), `emails.value eq "x"`, `id eq "x"`, `active eq true`, joined by `and`.
 * Pure: text → a list of equality conditions. Anything else (`or`, `not`, `co`, `sw`, `pr`,
 * grouping, other attributes) is refused with `invalidFilter`, never answered approximately.
 */
import { ScimError } from './errors.js';
import { USER_SCHEMA } from './resource.js';

/** One equality. String comparisons follow each attribute's caseExact (userName, emails: no). */
export type FilterCondition =
  | { readonly attribute: 'userName' | 'externalId' | 'id' | 'email' | 'displayName'; readonly value: string }
  | { readonly attribute: 'active'; readonly value: boolean };

const invalid = (detail: string): ScimError => new ScimError(400, detail, 'invalidFilter');

const ATTRIBUTES = new Map<string, FilterCondition['attribute']>([
  ['username', 'userName'], ['externalid', 'externalId'], ['id', 'id'], ['emails', 'email'], ['emails.value', 'email'],
  ['displayname', 'displayName'], ['active', 'active'],
]);
const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr']);

type Token = { readonly kind: 'word'; readonly text: string } | { readonly kind: 'string'; readonly text: string } | { readonly kind: 'paren'; readonly text: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '(' || c === ')' || c === '[' || c === ']') { out.push({ kind: 'paren', text: c }); i++; continue; }
    if (c === '"') {
      // A JSON string: escapes as JSON has them.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw invalid('unterminated string in filter');
      try {
        out.push({ kind: 'string', text: JSON.parse(text.slice(i, j + 1)) as string });
      } catch {
        throw invalid('bad escape in a filter string');
      }
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < text.length && !/[\s()[\]"]/.test(text[j]!)) j++;
    out.push({ kind: 'word', text: text.slice(i, j) });
    i = j;
  }
  return out;
}

/** Parses a filter into the conjunction it states. */
export function parseFilter(text: string): FilterCondition[] {
  if (text.length > 1000) throw invalid('the filter is too long');
  const tokens = tokenize(text);
  if (tokens.length === 0) throw invalid('the filter is empty');
  const conditions: FilterCondition[] = [];
  let i = 0;
  for (;;) {
    const attr = tokens[i];
    const op = tokens[i + 1];
    const value = tokens[i + 2];
    if (attr?.kind === 'paren' || op?.kind === 'paren') throw invalid('grouping and value filters are not supported; use attribute eq value [and …]');
    if (attr?.kind !== 'word' || op?.kind !== 'word') throw invalid('expected attribute eq value');
    let name = attr.text;
    if (name.toLowerCase().startsWith(`${USER_SCHEMA.toLowerCase()}:`)) name = name.slice(USER_SCHEMA.length + 1);
    const attribute = ATTRIBUTES.get(name.toLowerCase());
    const operator = op.text.toLowerCase();
    if (!OPERATORS.has(operator)) throw invalid(`unknown operator ${op.text}`);
    if (operator !== 'eq') throw invalid(`operator ${op.text} is not supported; Floe filters with eq`);
    if (!attribute) throw invalid(`filtering on ${attr.text} is not supported (userName, externalId, id, emails.value, displayName, active)`);
    if (value === undefined || value.kind === 'paren') throw invalid(`${attr.text} eq needs a value`);
    if (attribute === 'active') {
      if (value.kind !== 'word' || !/^(true|false)$/i.test(value.text)) throw invalid('active eq takes true or false');
      conditions.push({ attribute, value: value.text.toLowerCase() === 'true' });
    } else {
      if (value.kind !== 'string') throw invalid(`${attr.text} eq takes a quoted string`);
      conditions.push({ attribute, value: value.text });
    }
    i += 3;
    if (i === tokens.length) return conditions;
    const joiner = tokens[i];
    if (joiner?.kind === 'word' && joiner.text.toLowerCase() === 'and') { i++; continue; }
    if (joiner?.kind === 'word' && /^(or|not)$/i.test(joiner.text)) throw invalid(`${joiner.text} is not supported; conditions join with and`);
    throw invalid(`unexpected ${joiner?.text ?? 'end'} in filter`);
  }
}
