-- Tenants, principals, roles, OAuth clients, signing keys and refresh tokens: what the token
-- endpoint and the auth hook need. Every row is keyed by tenant_id.

CREATE TABLE tenants (
  id            text PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9_-]{0,62}$'),
  display_name  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Users and service accounts. LOCKED is derived from login_failures, never stored.
CREATE TABLE principals (
  id                      uuid PRIMARY KEY,
  tenant_id               text NOT NULL REFERENCES tenants(id),
  kind                    text NOT NULL CHECK (kind IN ('user', 'service_account')),
  name                    text NOT NULL,
  status                  text NOT NULL CHECK (status IN ('ACTIVE', 'INVITED', 'SUSPENDED', 'DEACTIVATED', 'PROVISIONED', 'EXPUNGED')),
  email                   text,
  display_name            text,
  default_role            text,
  default_warehouse       text,
  comment                 text,
  must_change_password    boolean NOT NULL DEFAULT false,
  identity_source         text NOT NULL DEFAULT 'NATIVE',
  session_epoch           bigint NOT NULL DEFAULT 0,
  login_failures          integer NOT NULL DEFAULT 0,
  last_login_at           timestamptz,
  legal_hold              boolean NOT NULL DEFAULT false,
  is_bootstrap_principal  boolean NOT NULL DEFAULT false,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
-- A name is taken only while the principal is not expunged (EXPUNGE releases it).
CREATE UNIQUE INDEX principals_tenant_name ON principals (tenant_id, lower(name)) WHERE status <> 'EXPUNGED';

-- Tenant roles granted to principals; tenant_admin is built in.
CREATE TABLE principal_roles (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  principal_id  uuid NOT NULL REFERENCES principals(id),
  role          text NOT NULL,
  granted_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (principal_id, role)
);

-- client_credentials pairs. Only the SHA-256 of the secret is kept.
CREATE TABLE oauth_clients (
  client_id       text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  principal_id    uuid NOT NULL REFERENCES principals(id),
  secret_sha256   bytea NOT NULL,
  allowed_scopes  text[] NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  rotated_at      timestamptz,
  revoked_at      timestamptz
);
CREATE INDEX oauth_clients_principal ON oauth_clients (principal_id);

-- JWT signing keys (ES256). The newest active key signs; retired keys verify until retired_at plus
-- the longest token lifetime has passed.
CREATE TABLE signing_keys (
  kid          text PRIMARY KEY,
  algorithm    text NOT NULL,
  private_jwk  jsonb NOT NULL,
  public_jwk   jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);

-- Refresh tokens, rotated on every use. A reused (already rotated) token revokes its family.
CREATE TABLE refresh_tokens (
  token_sha256   bytea PRIMARY KEY,
  family_id      uuid NOT NULL,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  principal_id   uuid NOT NULL REFERENCES principals(id),
  client_id      text,
  scope          text NOT NULL,
  auth_method    text NOT NULL,
  amr            text[] NOT NULL,
  auth_time      timestamptz NOT NULL,
  session_epoch  bigint NOT NULL,
  expires_at     timestamptz NOT NULL,
  used_at        timestamptz,
  revoked_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);
