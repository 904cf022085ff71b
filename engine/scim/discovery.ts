/**
 * The discovery documents of RFC 7644 §4 (`/ServiceProviderConfig`, `/Schemas`, `/ResourceTypes`),
 * minimal and true: they describe what `/scim/v2` actually does — Users only, PATCH yes, bulk,
 * sort and ETags no, filters of `eq` joined by `and` with at most MAX_PAGE_SIZE results — and the
 * User attributes Floe keeps.
 */
import { NAME_PARTS, USER_SCHEMA } from './resource.js';

const SERVICE_PROVIDER_CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
/** Same as users.ts MAX_PAGE_SIZE (kept here without importing the store code). */
const MAX_RESULTS = 200;

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: true },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{
      type: 'oauthbearertoken', name: 'OAuth Bearer Token', primary: true,
      description: "The tenant's SCIM token (floe_scim_…) in Authorization: Bearer, issued by the operator with floe admin scim-token",
    }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): { id: string; [k: string]: unknown }[] {
  return [{
    schemas: [RESOURCE_TYPE_SCHEMA], id: 'User', name: 'User', endpoint: '/Users', description: 'Users provisioned by an identity provider',
    schema: USER_SCHEMA, schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  }];
}

interface Attribute {
  readonly name: string;
  readonly type: 'string' | 'boolean' | 'complex';
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: 'readWrite' | 'writeOnly' | 'readOnly';
  readonly returned: 'default' | 'never' | 'always';
  readonly uniqueness: 'none' | 'server';
  readonly subAttributes?: readonly Attribute[];
}

const attr = (name: string, description: string, o: Partial<Attribute> = {}): Attribute => ({
  name, type: 'string', multiValued: false, description, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none', ...o,
});

export const SCHEMA_DOCUMENTS: readonly { id: string; [k: string]: unknown }[] = [{
  schemas: [SCHEMA_SCHEMA],
  id: USER_SCHEMA,
  name: 'User',
  description: 'User Account (the attributes Floe keeps; others are accepted and ignored)',
  attributes: [
    attr('userName', "The user's name in Floe (unique per tenant, case-insensitive)", { required: true, uniqueness: 'server' }),
    attr('externalId', "The identity provider's identifier", { caseExact: true }),
    attr('name', "The user's name parts", { type: 'complex', subAttributes: NAME_PARTS.map((p) => attr(p, p)) }),
    attr('displayName', 'Name shown for the user'),
    attr('emails', 'E-mail addresses; the primary one is the address Floe uses (unique per tenant)', {
      type: 'complex', multiValued: true,
      subAttributes: [attr('value', 'The address'), attr('type', 'work, home or other'), attr('primary', 'The preferred address', { type: 'boolean' }), attr('display', 'Display form')],
    }),
    attr('active', 'false suspends the user', { type: 'boolean' }),
    attr('password', 'Kept (as an Argon2id hash) only where the tenant lets provisioned users sign in with a password', { mutability: 'writeOnly', returned: 'never' }),
  ],
}];
