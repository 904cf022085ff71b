/**
 * SCIM PATCH (RFC 7644 §3.5.2) on a User document, pure: a `PatchOp` body and the current
 * document in, the next document out. Operation names are case-insensitive (Entra ID writes
 * `Replace`, Okta `replace`). Both identity providers' shapes are handled:
 *
 * - Okta: no path, a value object — `{"op":"replace","value":{"active":false}}` (also `password`);
 * - Entra ID: a path per attribute — `{"op":"Replace","path":"active","value":"False"}`,
 *   `{"op":"Replace","path":"emails[type eq \"work\"].value","value":"a@b.c"}`,
 *   `{"op":"Add","path":"name.givenName","value":"…"}`, `{"op":"Remove","path":"externalId"}`.
 *
 * Paths: an attribute (optionally behind the core schema's URN), `name.<part>`, `emails`,
 * `emails[<sub> eq <value>]` and `emails[<sub> eq <value>].<sub>`. A value filter that matches no
 * e-mail on add or replace adds one with the filtered sub-attribute set (Entra ID adds a work
 * address this way). Attributes Floe does not keep (extension schemas, title, phoneNumbers, …) are
 * accepted and ignored, as on POST; read-only ones (id, meta) are `mutability`, unknown ones
 * `invalidPath`.
 */
import { badPath, badSyntax, badValue, ScimError } from './errors.js';
import {
  classifyAttribute, isObject, namePart, parseActive, parseEmail, parseEmails, parseName, PATCH_OP_SCHEMA, USER_SCHEMA,
  type NamePart, type ScimEmail, type ScimName, type ScimUserDocument,
} from './resource.js';

export type PatchOpName = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  readonly op: PatchOpName;
  readonly path: string | undefined;
  readonly value: unknown;
}

/** Parses the request body: `schemas` (when sent) names PatchOp, `Operations` is a non-empty array. */
export function parsePatchRequest(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw badSyntax('the body must be a JSON object (a SCIM PatchOp)');
  const entries = new Map(Object.entries(body).map(([k, v]) => [k.toLowerCase(), v] as const));
  const schemas = entries.get('schemas');
  if (schemas !== undefined && (!Array.isArray(schemas) || !schemas.includes(PATCH_OP_SCHEMA))) throw badSyntax(`schemas must be ["${PATCH_OP_SCHEMA}"]`);
  const ops = entries.get('operations');
  if (!Array.isArray(ops) || ops.length === 0) throw badSyntax('Operations must be a non-empty array');
  if (ops.length > 1000) throw new ScimError(413, 'at most 1000 operations per request', 'tooMany');
  return ops.map((raw, i) => {
    if (!isObject(raw)) throw badSyntax(`Operations[${i}] must be an object`);
    const fields = new Map(Object.entries(raw).map(([k, v]) => [k.toLowerCase(), v] as const));
    const op = fields.get('op');
    if (typeof op !== 'string' || !/^(add|replace|remove)$/i.test(op)) throw badSyntax(`Operations[${i}].op must be add, replace or remove`);
    const path = fields.get('path');
    if (path !== undefined && path !== null && (typeof path !== 'string' || path.trim() === '')) throw badPath(`Operations[${i}].path must be a non-empty string`);
    return { op: op.toLowerCase() as PatchOpName, path: typeof path === 'string' ? path.trim() : undefined, value: fields.get('value') };
  });
}

/** A parsed path: the attribute, an optional value filter, an optional sub-attribute. */
interface Path {
  readonly attribute: string;
  readonly filter: { readonly sub: string; readonly value: string | boolean } | undefined;
  readonly sub: string | undefined;
}

export function parsePath(text: string): Path {
  let rest = text;
  if (rest.toLowerCase().startsWith(`${USER_SCHEMA.toLowerCase()}:`)) rest = rest.slice(USER_SCHEMA.length + 1);
  else if (/^urn:/i.test(rest)) return { attribute: rest, filter: undefined, sub: undefined }; // an extension: ignored
  const m = /^([A-Za-z][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z][\w$-]*))?$/s.exec(rest);
  if (!m) throw badPath(`cannot read path ${JSON.stringify(text)}`);
  let filter: Path['filter'];
  if (m[2] !== undefined) {
    const f = /^\s*([A-Za-z][\w$-]*)\s+eq\s+("(?:[^"\\]|\\.)*"|true|false)\s*$/is.exec(m[2]);
    if (!f) throw badPath(`value filters take the form [sub-attribute eq "value"]: ${JSON.stringify(text)}`);
    const raw = f[2]!;
    filter = { sub: f[1]!.toLowerCase(), value: raw.startsWith('"') ? JSON.parse(raw) as string : raw.toLowerCase() === 'true' };
  }
  return { attribute: m[1]!, filter, sub: m[3] };
}

type MutableEmail = { -readonly [K in keyof ScimEmail]?: ScimEmail[K] };

/** The working copy operations edit. */
interface Draft {
  userName: string;
  externalId: string | null;
  displayName: string | null;
  name: Partial<Record<NamePart, string>>;
  emails: MutableEmail[];
  active: boolean;
  password: string | undefined;
}

/** Applies the operations in order; the result is validated as a whole by the caller. */
export function applyPatch(doc: ScimUserDocument, operations: readonly PatchOperation[]): ScimUserDocument {
  const d: Draft = {
    userName: doc.userName, externalId: doc.externalId, displayName: doc.displayName, name: { ...doc.name },
    emails: doc.emails.map((e) => ({ ...e })), active: doc.active, password: undefined,
  };
  for (const op of operations) {
    if (op.path === undefined) applyWithoutPath(d, op);
    else applyAtPath(d, op.op, parsePath(op.path), op.value, op.path);
  }
  const emails = d.emails.map((e, i) => {
    if (typeof e.value !== 'string' || e.value.trim() === '') throw badValue(`emails[${i}] has no value`);
    return parseEmail(e);
  });
  if (d.userName.trim() === '') throw badValue('userName is required');
  return {
    userName: d.userName.trim(), externalId: d.externalId, displayName: d.displayName, name: d.name as ScimName, emails, active: d.active,
    ...(d.password !== undefined ? { password: d.password } : {}),
  };
}

/** Okta's form: the value is an object of attributes (keys may themselves be paths). */
function applyWithoutPath(d: Draft, op: PatchOperation): void {
  if (op.op === 'remove') throw new ScimError(400, 'remove needs a path', 'noTarget');
  if (!isObject(op.value)) throw badValue(`${op.op} without a path needs an object value`);
  for (const [key, value] of Object.entries(op.value)) applyAtPath(d, op.op, parsePath(key), value, key);
}

function stringOrNull(attribute: string, v: unknown): string | null {
  if (v === null) return null;
  // Entra ID sends single values of some attributes as a one-element array of {value}.
  if (Array.isArray(v) && v.length === 1 && isObject(v[0]) && 'value' in v[0]) return stringOrNull(attribute, v[0].value);
  if (typeof v !== 'string') throw badValue(`${attribute} must be a string`);
  return v;
}

function applyAtPath(d: Draft, op: PatchOpName, path: Path, value: unknown, text: string): void {
  const c = classifyAttribute(path.attribute);
  switch (c.kind) {
    case 'ignored': return;
    case 'read-only': throw new ScimError(400, `${path.attribute} is read-only`, 'mutability');
    case 'unknown': throw badPath(`User has no attribute ${path.attribute} (${JSON.stringify(text)})`);
    case 'kept': break;
  }
  const attribute = c.attribute;
  if (attribute !== 'emails' && path.filter) throw badPath(`${path.attribute} is not multi-valued; a value filter cannot apply (${JSON.stringify(text)})`);
  if (attribute !== 'emails' && attribute !== 'name' && path.sub) throw badPath(`${path.attribute} has no sub-attributes (${JSON.stringify(text)})`);
  switch (attribute) {
    case 'userName': {
      if (op === 'remove') throw new ScimError(400, 'userName is required and cannot be removed', 'mutability');
      const v = stringOrNull('userName', value);
      if (v === null || v.trim() === '') throw badValue('userName must not be empty');
      d.userName = v;
      return;
    }
    case 'externalId':
    case 'displayName':
      d[attribute] = op === 'remove' ? null : stringOrNull(attribute, value);
      return;
    case 'active':
      if (op === 'remove') throw new ScimError(400, 'active cannot be removed; replace it with true or false', 'mutability');
      d.active = parseActive(value);
      return;
    case 'password':
      if (op === 'remove') throw new ScimError(400, 'password cannot be removed', 'mutability');
      if (typeof value !== 'string') throw badValue('password must be a string');
      d.password = value;
      return;
    case 'name':
      applyToName(d, op, path.sub, value);
      return;
    case 'emails':
      applyToEmails(d, op, path, value);
      return;
    default:
      throw badPath(`${path.attribute} cannot be patched`);
  }
}

function applyToName(d: Draft, op: PatchOpName, sub: string | undefined, value: unknown): void {
  if (sub === undefined) {
    if (op === 'remove') d.name = {};
    else if (op === 'replace') d.name = { ...parseName(value) };
    else d.name = { ...d.name, ...parseName(value) };
    return;
  }
  const part = namePart(sub);
  if (!part) throw badPath(`name has no sub-attribute ${sub}`);
  if (op === 'remove') {
    delete d.name[part];
    return;
  }
  const v = stringOrNull(`name.${part}`, value);
  if (v === null) delete d.name[part];
  else d.name[part] = v;
}

function matches(e: Draft['emails'][number], filter: NonNullable<Path['filter']>): boolean {
  switch (filter.sub) {
    case 'type': return typeof filter.value === 'string' && (e.type ?? '').toLowerCase() === filter.value.toLowerCase();
    case 'value': return typeof filter.value === 'string' && (e.value ?? '').toLowerCase() === filter.value.toLowerCase();
    case 'primary': return (e.primary ?? false) === (filter.value === true);
    case 'display': return typeof filter.value === 'string' && e.display === filter.value;
    default: throw badPath(`emails cannot be filtered on ${filter.sub}`);
  }
}

/** A primary e-mail is unique: the one just marked primary wins. */
function keepOnePrimary(d: Draft, winner: Draft['emails'][number] | undefined): void {
  if (!winner?.primary) return;
  for (const e of d.emails) if (e !== winner && e.primary) e.primary = false;
}

function setEmailSub(e: Draft['emails'][number], sub: string, value: unknown): void {
  switch (sub.toLowerCase()) {
    case 'value': {
      const v = stringOrNull('emails.value', value);
      if (v === null || v.trim() === '') throw badValue('emails.value must not be empty');
      e.value = v.trim();
      return;
    }
    case 'type': { const v = stringOrNull('emails.type', value); if (v === null) delete e.type; else e.type = v; return; }
    case 'display': { const v = stringOrNull('emails.display', value); if (v === null) delete e.display; else e.display = v; return; }
    case 'primary': e.primary = parseActive(value); return;
    default: throw badPath(`emails has no sub-attribute ${sub}`);
  }
}

function applyToEmails(d: Draft, op: PatchOpName, path: Path, value: unknown): void {
  const { filter, sub } = path;
  if (!filter && !sub) {
    if (op === 'remove') { d.emails = []; return; }
    const incoming = parseEmails(Array.isArray(value) ? value : [value]);
    if (op === 'replace') d.emails = incoming.map((e) => ({ ...e }));
    else {
      for (const e of incoming) {
        const same = d.emails.find((x) => (x.value ?? '').toLowerCase() === e.value.toLowerCase());
        if (same) Object.assign(same, e);
        else d.emails.push({ ...e });
      }
    }
    keepOnePrimary(d, d.emails.find((e) => incoming.some((i) => i.primary && i.value.toLowerCase() === (e.value ?? '').toLowerCase())));
    return;
  }
  if (!filter) {
    // `emails.value` without a filter: unambiguous only with at most one address.
    if (d.emails.length > 1) throw badPath('emails has several values; select one with a filter such as emails[type eq "work"]');
    if (op === 'remove') { if (sub!.toLowerCase() === 'value') d.emails = []; else if (d.emails[0]) setEmailSub(d.emails[0], sub!, null); return; }
    const target = d.emails[0] ?? {};
    setEmailSub(target, sub!, value);
    if (d.emails.length === 0) d.emails.push(target);
    return;
  }
  const targets = d.emails.filter((e) => matches(e, filter));
  if (op === 'remove') {
    if (sub === undefined || sub.toLowerCase() === 'value') d.emails = d.emails.filter((e) => !targets.includes(e));
    else for (const e of targets) setEmailSub(e, sub, null);
    return;
  }
  if (targets.length === 0) {
    // Add the address the filter describes (Entra ID: replace emails[type eq "work"].value on a user without one).
    const created: Draft['emails'][number] = {};
    setEmailSub(created, filter.sub, filter.value);
    targets.push(created);
    d.emails.push(created);
  }
  for (const e of targets) {
    if (sub !== undefined) setEmailSub(e, sub, value);
    else {
      if (!isObject(value)) throw badValue('a filtered emails path without a sub-attribute takes an object value');
      for (const [k, v] of Object.entries(value)) setEmailSub(e, k, v);
    }
  }
  keepOnePrimary(d, targets.find((e) => e.primary));
}
