-- Principal management: passwords and their history, MFA, invitations, personal access tokens,
-- keypairs, jwt-bearer replay protection, MANAGE privileges, tenant roles, the tenant password
-- policy, the partitioned audit log, audit events, webhook subscriptions and deliveries.
-- Secrets are never stored in plaintext: passwords as Argon2id, tokens as SHA-256, TOTP and
-- webhook secrets encrypted with the server key (AES-256-GCM, see engine/principals/secret-box.ts).

-- Columns of the principal row that the management statements need.
ALTER TABLE principals ADD COLUMN last_failed_login_at timestamptz;
ALTER TABLE principals ADD COLUMN legal_hold_reason text;
ALTER TABLE principals ADD COLUMN deactivated_at timestamptz;
ALTER TABLE principals ADD COLUMN expunged_at timestamptz;
ALTER TABLE principals ADD COLUMN expunge_reason text;
ALTER TABLE principals ADD COLUMN status_changed_at timestamptz NOT NULL DEFAULT now();
-- E-mail is unique per tenant among principals that still exist.
CREATE UNIQUE INDEX principals_tenant_email ON principals (tenant_id, lower(email)) WHERE status <> 'EXPUNGED' AND email IS NOT NULL;
CREATE INDEX principals_deactivated ON principals (deactivated_at) WHERE status = 'DEACTIVATED';

-- The current password hash (Argon2id PHC string) lives apart from the principal row, so that
-- nothing that reads principals can show it.
CREATE TABLE principal_passwords (
  principal_id  uuid PRIMARY KEY REFERENCES principals(id),
  tenant_id     text NOT NULL REFERENCES tenants(id),
  hash          text NOT NULL CHECK (hash LIKE '$argon2id$%'),
  changed_at    timestamptz NOT NULL
);

-- Earlier hashes, for the policy's "no reuse of the last N passwords".
CREATE TABLE password_history (
  principal_id  uuid NOT NULL REFERENCES principals(id),
  hash          text NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX password_history_principal ON password_history (principal_id, created_at DESC);

-- The operator's password policy per tenant; a tenant without a row uses the documented defaults.
CREATE TABLE tenant_password_policies (
  tenant_id           text PRIMARY KEY REFERENCES tenants(id),
  min_length          integer NOT NULL CHECK (min_length BETWEEN 1 AND 1024),
  min_classes         integer NOT NULL CHECK (min_classes BETWEEN 0 AND 4),
  disallow_username   boolean NOT NULL,
  history_count       integer NOT NULL CHECK (history_count BETWEEN 0 AND 100),
  refuse_common       boolean NOT NULL,
  require_mfa         boolean NOT NULL DEFAULT false,
  updated_at          timestamptz NOT NULL DEFAULT now()
);

-- TOTP authenticators. The secret is encrypted with the server key; verified_at turns it on.
CREATE TABLE principal_mfa (
  principal_id      uuid PRIMARY KEY REFERENCES principals(id),
  tenant_id         text NOT NULL REFERENCES tenants(id),
  method            text NOT NULL CHECK (method = 'TOTP'),
  secret_encrypted  text NOT NULL,
  created_at        timestamptz NOT NULL,
  verified_at       timestamptz
);

-- Codes already accepted (each code works once): the time step it was valid for.
CREATE TABLE mfa_used_codes (
  principal_id  uuid NOT NULL REFERENCES principals(id),
  time_step     bigint NOT NULL,
  used_at       timestamptz NOT NULL,
  PRIMARY KEY (principal_id, time_step)
);

-- One-shot invitations. Only the SHA-256 of the token is stored.
CREATE TABLE invitations (
  id            uuid PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  principal_id  uuid NOT NULL REFERENCES principals(id),
  token_sha256  bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  redeemed_at   timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX invitations_principal ON invitations (principal_id);

-- Personal access tokens. Only the SHA-256 of the token is stored; `token_prefix` is the
-- non-secret head shown to help people recognise their tokens.
CREATE TABLE personal_access_tokens (
  id             uuid PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  principal_id   uuid NOT NULL REFERENCES principals(id),
  name           text NOT NULL,
  token_sha256   bytea NOT NULL UNIQUE,
  token_prefix   text NOT NULL,
  scope          text[] NOT NULL,
  created_by     uuid,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz,
  last_used_at   timestamptz,
  revoked_at     timestamptz
);
CREATE UNIQUE INDEX personal_access_tokens_name ON personal_access_tokens (principal_id, lower(name)) WHERE revoked_at IS NULL;

-- Service-account keypairs. A key id is unique per principal among active rows only.
CREATE TABLE principal_keypairs (
  id            uuid PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  principal_id  uuid NOT NULL REFERENCES principals(id),
  key_id        text NOT NULL,
  algorithm     text NOT NULL CHECK (algorithm IN ('RS256', 'RS512', 'ES256', 'ES384')),
  public_key    text NOT NULL,
  fingerprint   text NOT NULL,
  created_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);
CREATE UNIQUE INDEX principal_keypairs_active ON principal_keypairs (principal_id, key_id) WHERE revoked_at IS NULL;

-- jti values of accepted jwt-bearer assertions, kept until the assertion would have expired.
CREATE TABLE jwt_bearer_jtis (
  principal_id  uuid NOT NULL REFERENCES principals(id),
  jti           text NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (principal_id, jti)
);
CREATE INDEX jwt_bearer_jtis_expiry ON jwt_bearer_jtis (expires_at);

-- Delegable MANAGE privileges (granted only by tenant_admin; never re-delegable).
CREATE TABLE principal_privileges (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  principal_id  uuid NOT NULL REFERENCES principals(id),
  privilege     text NOT NULL CHECK (privilege IN ('MANAGE USERS', 'MANAGE PATS', 'MANAGE SERVICE ACCOUNTS')),
  granted_by    uuid,
  granted_at    timestamptz NOT NULL,
  PRIMARY KEY (principal_id, privilege)
);

-- Tenant roles (CREATE ROLE). tenant_admin is built in and has no row. Grants are principal_roles.
CREATE TABLE tenant_roles (
  tenant_id   text NOT NULL REFERENCES tenants(id),
  name        text NOT NULL,
  created_at  timestamptz NOT NULL,
  created_by  uuid
);
CREATE UNIQUE INDEX tenant_roles_name ON tenant_roles (tenant_id, lower(name));

-- The audit log, range-partitioned by created_at: a catch-all partition for everything before the
-- month the store was created, then one partition per month (created ahead by
-- user_audit_log_ensure_future_partitions, dropped after retention by
-- user_audit_log_drop_old_partitions; the catch-all is never dropped).
CREATE TABLE user_audit_log (
  id           uuid NOT NULL,
  tenant_id    text NOT NULL,
  actor_id     uuid,
  actor_name   text,
  target_id    uuid,
  target_name  text,
  event_type   text NOT NULL,
  details      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX user_audit_log_tenant_time ON user_audit_log (tenant_id, created_at);

-- Creates the monthly partitions from the month of `from_ts` to N months after it (existing ones
-- are kept). Partition names are user_audit_log_pYYYYMM; bounds are UTC month starts.
CREATE FUNCTION user_audit_log_ensure_future_partitions(months integer, from_ts timestamptz DEFAULT now())
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  month_start timestamp := date_trunc('month', from_ts AT TIME ZONE 'UTC');
  lower_bound timestamp;
  part_name text;
  created integer := 0;
  historic_upper timestamp;
BEGIN
  SELECT to_date(substring(c.relname FROM 'user_audit_log_historic_(\d{6})$'), 'YYYYMM')::timestamp
    INTO historic_upper
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
   WHERE p.relname = 'user_audit_log' AND c.relname LIKE 'user_audit_log_historic_%';
  FOR k IN 0..months LOOP
    lower_bound := month_start + make_interval(months => k);
    IF historic_upper IS NOT NULL AND lower_bound < historic_upper THEN
      CONTINUE;
    END IF;
    part_name := 'user_audit_log_p' || to_char(lower_bound, 'YYYYMM');
    IF to_regclass(part_name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF user_audit_log FOR VALUES FROM (%L) TO (%L)',
        part_name, (lower_bound AT TIME ZONE 'UTC'), ((lower_bound + interval '1 month') AT TIME ZONE 'UTC'));
      created := created + 1;
    END IF;
  END LOOP;
  RETURN created;
END;
$$;

-- Drops the monthly partitions whose upper bound is older than `retention_days` before `from_ts`.
-- The catch-all (user_audit_log_historic_*) is never dropped.
CREATE FUNCTION user_audit_log_drop_old_partitions(retention_days integer, from_ts timestamptz DEFAULT now())
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  cutoff timestamp := (from_ts AT TIME ZONE 'UTC') - make_interval(days => retention_days);
  r record;
  upper_bound timestamp;
  dropped integer := 0;
BEGIN
  FOR r IN
    SELECT c.relname
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = 'user_audit_log' AND c.relname ~ '^user_audit_log_p\d{6}$'
  LOOP
    upper_bound := to_date(substring(r.relname FROM '(\d{6})$'), 'YYYYMM')::timestamp + interval '1 month';
    IF upper_bound <= cutoff THEN
      EXECUTE format('DROP TABLE %I', r.relname);
      dropped := dropped + 1;
    END IF;
  END LOOP;
  RETURN dropped;
END;
$$;

-- The catch-all before the current month (named after its upper bound), then 24 months ahead.
DO $$
DECLARE
  month_start timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
BEGIN
  EXECUTE format('CREATE TABLE %I PARTITION OF user_audit_log FOR VALUES FROM (MINVALUE) TO (%L)',
    'user_audit_log_historic_' || to_char(month_start, 'YYYYMM'), (month_start AT TIME ZONE 'UTC'));
  PERFORM user_audit_log_ensure_future_partitions(24, now());
END;
$$;

-- Audit events: one per audit row, the outbox that webhook deliveries are made from. The event id
-- is the X-Svc-Event-Id of every delivery of it.
CREATE TABLE audit_events (
  id           uuid PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  event_type   text NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX audit_events_tenant_time ON audit_events (tenant_id, created_at);

-- Webhook subscriptions. The signing secret is encrypted with the server key, never returned.
CREATE TABLE webhook_subscriptions (
  id                uuid PRIMARY KEY,
  tenant_id         text NOT NULL REFERENCES tenants(id),
  name              text NOT NULL,
  url               text NOT NULL CHECK (url LIKE 'https://%'),
  secret_encrypted  text NOT NULL,
  events            text[],
  created_by        uuid,
  created_at        timestamptz NOT NULL,
  dropped_at        timestamptz
);
CREATE UNIQUE INDEX webhook_subscriptions_name ON webhook_subscriptions (tenant_id, lower(name)) WHERE dropped_at IS NULL;

-- One row per (event, subscription). Claimed by a worker with a lease (lease_until) so that
-- replicas never post the same row at the same time; a crash leaves the lease to expire.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id),
  event_id         uuid NOT NULL REFERENCES audit_events(id),
  subscription_id  uuid NOT NULL REFERENCES webhook_subscriptions(id),
  state            text NOT NULL CHECK (state IN ('pending', 'retrying', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  lease_until      timestamptz,
  last_status      integer,
  last_error       text,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state IN ('pending', 'retrying');
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- The server key for encrypting TOTP and webhook secrets when the operator configures none.
CREATE TABLE server_secrets (
  name        text PRIMARY KEY,
  value       bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
