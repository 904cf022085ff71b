-- SCIM 2.0 provisioning (engine/scim, docs/principals.md "SCIM provisioning"): the tenant's
-- provisioning token, the attributes of a provisioned user that the principal row has no column
-- for, and the tenant's choice of how provisioned users may sign in.

-- One live bearer token per tenant for the identity provider. Only its SHA-256 is stored, with a
-- non-secret display prefix; rotation revokes the live row and inserts a new one.
CREATE TABLE scim_tokens (
  id            uuid PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  token_sha256  bytea NOT NULL UNIQUE,
  token_prefix  text NOT NULL,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE UNIQUE INDEX scim_tokens_live ON scim_tokens (tenant_id) WHERE revoked_at IS NULL;

-- What SCIM keeps about a provisioned user beyond the principal row (userName is principals.name,
-- the primary e-mail principals.email, displayName principals.display_name).
CREATE TABLE scim_users (
  principal_id  uuid PRIMARY KEY REFERENCES principals(id),
  tenant_id     text NOT NULL REFERENCES tenants(id),
  external_id   text,
  -- The SCIM "name" complex attribute as sent (formatted, familyName, givenName, ...).
  name          jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Every e-mail as sent ({value, type, primary}); the primary one is also principals.email.
  emails        jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- The identity provider's last word on `active`.
  active        boolean NOT NULL,
  -- The user is SUSPENDED because the identity provider said active=false (not an administrator):
  -- only such a suspension is lifted by active=true.
  suspended_by_scim  boolean NOT NULL DEFAULT false,
  -- Bumped on every SCIM change: the resource version (meta.version, ETag).
  version       integer NOT NULL DEFAULT 1
);
CREATE INDEX scim_users_external_id ON scim_users (tenant_id, external_id);

-- How PROVISIONED users may sign in, per tenant: any of 'password' (a password the identity
-- provider pushes, or an administrator sets) and 'pat' (personal access tokens). A tenant without
-- a row allows neither: provisioned users then exist for grants and ownership only.
CREATE TABLE tenant_provisioning_policies (
  tenant_id        text PRIMARY KEY REFERENCES tenants(id),
  sign_in_methods  text[] NOT NULL CHECK (sign_in_methods <@ ARRAY['password', 'pat']::text[]),
  updated_at       timestamptz NOT NULL
);
