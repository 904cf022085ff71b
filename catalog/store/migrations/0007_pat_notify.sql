-- Personal access tokens join what authentication caches (engine/principals/auth-cache.ts): a
-- change to a token that decides an exchange (created, revoked, rescoped, re-dated, re-owned,
-- deleted) is announced on `floe_auth` with its owner's id, by the function of migration 0006.
-- `last_used_at` is left out: every exchange may write it, and no decision reads it.
CREATE TRIGGER personal_access_tokens_announce
  AFTER INSERT OR DELETE OR UPDATE OF id, tenant_id, principal_id, token_sha256, scope, expires_at, revoked_at ON personal_access_tokens
  FOR EACH ROW EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER personal_access_tokens_announce_truncate AFTER TRUNCATE ON personal_access_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION floe_announce_auth_change();
