-- Second factors the web console adds (docs/console.md): one-time recovery codes shown once when
-- an authenticator is turned on through the console, WebAuthn passkeys, and the challenges a
-- passkey ceremony signs. Codes are stored as SHA-256 hashes (each is 50 random bits, like a PAT
-- is hashed, not a password), passkeys as their public keys.

CREATE TABLE principal_recovery_codes (
  principal_id  uuid NOT NULL REFERENCES principals(id),
  tenant_id     text NOT NULL REFERENCES tenants(id),
  code_sha256   text NOT NULL,
  created_at    timestamptz NOT NULL,
  used_at       timestamptz,
  PRIMARY KEY (principal_id, code_sha256)
);

CREATE TABLE principal_passkeys (
  credential_id  text PRIMARY KEY,            -- base64url, as WebAuthn names it
  principal_id   uuid NOT NULL REFERENCES principals(id),
  tenant_id      text NOT NULL REFERENCES tenants(id),
  name           text NOT NULL,
  public_key     text NOT NULL,               -- COSE key, base64url
  sign_count     bigint NOT NULL DEFAULT 0,
  transports     text NOT NULL DEFAULT '',    -- comma-separated
  created_at     timestamptz NOT NULL,
  last_used_at   timestamptz
);
CREATE INDEX principal_passkeys_principal ON principal_passkeys (principal_id);

-- A challenge is used once: the ceremony that answers it deletes the row.
CREATE TABLE webauthn_challenges (
  challenge     text PRIMARY KEY,             -- base64url
  tenant_id     text NOT NULL REFERENCES tenants(id),
  principal_id  uuid NOT NULL REFERENCES principals(id),
  purpose       text NOT NULL CHECK (purpose IN ('register', 'authenticate')),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX webauthn_challenges_principal ON webauthn_challenges (principal_id);
