-- Changes to what authentication reads (a principal's status, epoch and roles, a client's
-- secret and scopes) are announced on channel `floe_auth` with the principal's id, or `*` when a
-- statement may have changed anything (TRUNCATE). Servers cache that state and drop an entry when
-- its principal is announced: the trigger makes every writer announce, whatever code path or
-- process it is (engine/principals/auth-cache.ts).
CREATE FUNCTION floe_announce_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('floe_auth', '*');
    RETURN NULL;
  END IF;
  IF TG_TABLE_NAME = 'principals' THEN
    IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('floe_auth', OLD.id::text); END IF;
    IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('floe_auth', NEW.id::text); END IF;
  ELSE
    IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('floe_auth', OLD.principal_id::text); END IF;
    IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('floe_auth', NEW.principal_id::text); END IF;
  END IF;
  RETURN NULL;
END $$;

-- Only the columns authentication reads: sign-ins update login counters on every attempt.
CREATE TRIGGER principals_announce
  AFTER INSERT OR DELETE OR UPDATE OF id, tenant_id, kind, name, status, session_epoch, is_bootstrap_principal ON principals
  FOR EACH ROW EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER principals_announce_truncate AFTER TRUNCATE ON principals
  FOR EACH STATEMENT EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER principal_roles_announce AFTER INSERT OR UPDATE OR DELETE ON principal_roles
  FOR EACH ROW EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER principal_roles_announce_truncate AFTER TRUNCATE ON principal_roles
  FOR EACH STATEMENT EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER oauth_clients_announce AFTER INSERT OR UPDATE OR DELETE ON oauth_clients
  FOR EACH ROW EXECUTE FUNCTION floe_announce_auth_change();
CREATE TRIGGER oauth_clients_announce_truncate AFTER TRUNCATE ON oauth_clients
  FOR EACH STATEMENT EXECUTE FUNCTION floe_announce_auth_change();
