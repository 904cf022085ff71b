/**
 * The SCIM User resource (RFC 7643 §4.1) as Floe keeps it, pure: parsing a request body into a
 * `ScimUserDocument` and rendering a stored user back. Attribute names are case-insensitive
 * (RFC 7643 §2.1): Entra ID and Okta spell them alike, but other clients need not.
 *
 * Kept: userName (the principal's name), externalId, displayName, name (its six sub-attributes),
 * emails (value, type, primary, display), active, and a write-only password. Ignored on input:
 * the other core attributes (title, phoneNumbers, addresses, locale, roles, groups, …), read-only
 * ones (id, meta, schemas) and extension schemas (Entra ID's enterprise extension): an identity
 * provider maps them whether or not the application keeps them, and refusing them would stop
 * provisioning. A body that is not a User at all, a missing userName or a mistyped value is refused.
 */
import { badSyntax, badValue } from './errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The sub-attributes of `name`, in RFC 7643's spelling. */
export const NAME_PARTS = ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'] as const;
export type NamePart = (typeof NAME_PARTS)[number];
export type ScimName = Readonly<Partial<Record<NamePart, string>>>;

export interface ScimEmail {
  readonly value: string;
  readonly type?: string;
  readonly primary?: boolean;
  readonly display?: string;
}

/** The attributes of a User that Floe keeps. */
export interface ScimUserDocument {
  readonly userName: string;
  readonly externalId: string | null;
  readonly displayName: string | null;
  readonly name: ScimName;
  readonly emails: readonly ScimEmail[];
  readonly active: boolean;
  /** Write-only (RFC 7643 `returned: never`): present only when the request carried one. */
  readonly password?: string;
}

/** Core User attributes Floe accepts and does not keep (RFC 7643 §4.1). */
const IGNORED_CORE = new Set(['nickname', 'profileurl', 'title', 'usertype', 'preferredlanguage', 'locale', 'timezone',
  'phonenumbers', 'ims', 'photos', 'addresses', 'groups', 'entitlements', 'roles', 'x509certificates']);
/** Read-only or protocol attributes a client may echo back (PUT bodies carry them). */
const READ_ONLY = new Set(['id', 'meta', 'schemas']);
/** Attributes the document holds, by lower-case name. */
export const KEPT_ATTRIBUTES = new Map<string, keyof ScimUserDocument>([
  ['username', 'userName'], ['externalid', 'externalId'], ['displayname', 'displayName'], ['name', 'name'],
  ['emails', 'emails'], ['active', 'active'], ['password', 'password'],
]);

/** What a path or attribute name refers to, case-insensitively. */
export type AttributeKind =
  | { readonly kind: 'kept'; readonly attribute: keyof ScimUserDocument }
  | { readonly kind: 'ignored' }
  | { readonly kind: 'read-only' }
  | { readonly kind: 'unknown' };

/** Classifies a top-level attribute name, with or without the core schema's URN in front. */
export function classifyAttribute(raw: string): AttributeKind {
  let name = raw;
  if (name.toLowerCase().startsWith(`${USER_SCHEMA.toLowerCase()}:`)) name = name.slice(USER_SCHEMA.length + 1);
  else if (/^urn:/i.test(name)) return { kind: 'ignored' }; // an extension schema, or one of its attributes
  const lower = name.toLowerCase();
  const kept = KEPT_ATTRIBUTES.get(lower);
  if (kept) return { kind: 'kept', attribute: kept };
  if (IGNORED_CORE.has(lower)) return { kind: 'ignored' };
  if (READ_ONLY.has(lower)) return { kind: 'read-only' };
  return { kind: 'unknown' };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `active` as identity providers send it: a boolean, or (Entra ID's older shape, still sent) the
 * strings "True" and "False" in any case.
 */
export function parseActive(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw badValue(`active must be true or false, got ${JSON.stringify(v)}`);
}

function optionalString(attribute: string, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw badValue(`${attribute} must be a string`);
  return v;
}

/** The `name` complex attribute; sub-attribute names case-insensitive, unknown ones refused. */
export function parseName(v: unknown): ScimName {
  if (v === null || v === undefined) return {};
  if (!isObject(v)) throw badValue('name must be an object');
  const out: Partial<Record<NamePart, string>> = {};
  for (const [key, value] of Object.entries(v)) {
    const part = namePart(key);
    if (!part) throw badValue(`name has no sub-attribute ${key}`);
    const text = optionalString(`name.${part}`, value);
    if (text !== null) out[part] = text;
  }
  return out;
}

export function namePart(key: string): NamePart | undefined {
  return NAME_PARTS.find((p) => p.toLowerCase() === key.toLowerCase());
}

export function parseEmail(v: unknown): ScimEmail {
  if (!isObject(v)) throw badValue('each of emails must be an object with a value');
  let value: string | undefined;
  let type: string | undefined;
  let primary: boolean | undefined;
  let display: string | undefined;
  for (const [key, raw] of Object.entries(v)) {
    switch (key.toLowerCase()) {
      case 'value': value = optionalString('emails.value', raw) ?? undefined; break;
      case 'type': type = optionalString('emails.type', raw) ?? undefined; break;
      case 'display': display = optionalString('emails.display', raw) ?? undefined; break;
      case 'primary':
        if (raw !== null && raw !== undefined) primary = parseBoolean('emails.primary', raw);
        break;
      default: break; // `$ref` and the like: not kept
    }
  }
  if (value === undefined || value.trim() === '') throw badValue('each of emails needs a value');
  return { value: value.trim(), ...(type !== undefined ? { type } : {}), ...(primary !== undefined ? { primary } : {}), ...(display !== undefined ? { display } : {}) };
}

function parseBoolean(attribute: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw badValue(`${attribute} must be true or false`);
}

export function parseEmails(v: unknown): ScimEmail[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw badValue('emails must be an array');
  return v.map(parseEmail);
}

/**
 * A POST or PUT body as a document. `schemas`, when sent, must name the core User schema (a Group
 * or a PatchOp sent to /Users is a client bug worth reporting, not ignoring).
 */
export function parseUserResource(body: unknown): ScimUserDocument {
  if (!isObject(body)) throw badSyntax('the body must be a JSON object (a SCIM User)');
  const attributes = new Map<keyof ScimUserDocument, unknown>();
  for (const [key, value] of Object.entries(body)) {
    const c = classifyAttribute(key);
    if (c.kind === 'kept') attributes.set(c.attribute, value);
    if (c.kind === 'read-only' && key.toLowerCase() === 'schemas') {
      if (!Array.isArray(value) || !value.some((s) => typeof s === 'string' && s.toLowerCase() === USER_SCHEMA.toLowerCase())) {
        throw badSyntax(`schemas must include ${USER_SCHEMA}`);
      }
    }
  }
  const userName = attributes.get('userName');
  if (typeof userName !== 'string' || userName.trim() === '') throw badValue('userName is required');
  const password = attributes.get('password');
  if (password !== undefined && password !== null && typeof password !== 'string') throw badValue('password must be a string');
  return {
    userName: userName.trim(),
    externalId: optionalString('externalId', attributes.get('externalId')),
    displayName: optionalString('displayName', attributes.get('displayName')),
    name: parseName(attributes.get('name')),
    emails: parseEmails(attributes.get('emails')),
    active: attributes.has('active') && attributes.get('active') !== null ? parseActive(attributes.get('active')) : true,
    ...(typeof password === 'string' ? { password } : {}),
  };
}

/**
 * The address the principal row keeps: the email marked primary, else the first of type work,
 * else the first; without any, the userName when it is an address (Entra ID's userName is the UPN,
 * and its default mapping omits emails when `mail` is empty).
 */
export function primaryEmail(doc: Pick<ScimUserDocument, 'emails' | 'userName'>): string | undefined {
  const chosen = doc.emails.find((e) => e.primary) ?? doc.emails.find((e) => e.type?.toLowerCase() === 'work') ?? doc.emails[0];
  if (chosen) return chosen.value;
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(doc.userName) ? doc.userName : undefined;
}

/** A provisioned user as stored: the principal row's columns and the SCIM row's. */
export interface StoredScimUser {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly email: string | null;
  readonly displayName: string | null;
  readonly externalId: string | null;
  readonly nameParts: ScimName;
  readonly emails: readonly ScimEmail[];
  readonly scimActive: boolean;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Whether SCIM shows the user as active: PROVISIONED is; SUSPENDED (by anyone) is not. */
export function isActive(u: Pick<StoredScimUser, 'status'>): boolean {
  return u.status === 'PROVISIONED';
}

/** The document a stored user stands for (what PATCH starts from). */
export function documentOf(u: StoredScimUser): ScimUserDocument {
  return { userName: u.name, externalId: u.externalId, displayName: u.displayName, name: u.nameParts, emails: emailsOf(u), active: isActive(u) };
}

/**
 * The e-mails as sent, with the principal's address as the primary one: an administrator may have
 * changed it with ALTER USER, and SCIM shows what Floe uses.
 */
function emailsOf(u: StoredScimUser): ScimEmail[] {
  if (u.email === null) return [...u.emails];
  const found = u.emails.some((e) => e.value.toLowerCase() === u.email!.toLowerCase());
  const emails = found ? u.emails.map((e) => ({ ...e, primary: e.value.toLowerCase() === u.email!.toLowerCase() })) : [{ value: u.email, type: 'work', primary: true }, ...u.emails.map((e) => ({ ...e, primary: false }))];
  return emails;
}

/** The wire form of a stored user; `base` is the absolute URL of `/scim/v2`. */
export function renderUser(u: StoredScimUser, base: string): Record<string, unknown> {
  const name = Object.keys(u.nameParts).length > 0 ? { name: u.nameParts } : {};
  return {
    schemas: [USER_SCHEMA],
    id: u.id,
    ...(u.externalId !== null ? { externalId: u.externalId } : {}),
    userName: u.name,
    ...name,
    ...(u.displayName !== null ? { displayName: u.displayName } : {}),
    emails: emailsOf(u),
    active: isActive(u),
    meta: {
      resourceType: 'User',
      created: u.createdAt.toISOString(),
      lastModified: u.updatedAt.toISOString(),
      location: `${base}/Users/${u.id}`,
      version: `W/"${u.version}"`,
    },
  };
}
