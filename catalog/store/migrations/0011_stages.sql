-- Bulk loading (docs/loading.md): named stages per catalog, who may use them, and the load history
-- of COPY INTO that makes a retried COPY skip files it already loaded.

-- A named stage: a folder of files to load, inside its catalog's warehouse. `location` is the
-- folder's URL ending in '/'. The owner (its creator) and tenant_admin may use it without a grant.
CREATE TABLE stages (
  id           uuid PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  catalog_id   uuid NOT NULL REFERENCES catalogs(id) ON DELETE CASCADE,
  name         text COLLATE "C" NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  location     text NOT NULL,
  -- FILE_FORMAT = (…) as [{ "key": "TYPE", "value": "CSV" }, …]: the default of COPY INTO.
  file_format  jsonb NOT NULL DEFAULT '[]'::jsonb,
  comment      text,
  owner_id     uuid NOT NULL REFERENCES principals(id),
  created_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX stages_catalog_name ON stages (catalog_id, name);

-- GRANT USAGE ON STAGE s TO USER u | ROLE r. `grantee` is the principal id or the role's name.
CREATE TABLE stage_grants (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  stage_id      uuid NOT NULL REFERENCES stages(id) ON DELETE CASCADE,
  grantee_kind  text NOT NULL CHECK (grantee_kind IN ('user', 'role')),
  grantee       text NOT NULL,
  granted_by    uuid,
  granted_at    timestamptz NOT NULL,
  PRIMARY KEY (stage_id, grantee_kind, grantee)
);

-- One row per file a COPY INTO loaded (or loaded in part under ON_ERROR = CONTINUE). A file with the
-- same location, size and etag is skipped by the next COPY into the same table unless FORCE.
-- `table_uuid` is the Iceberg table-uuid: a table dropped and created again starts with no history.
CREATE TABLE copy_history (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  table_uuid     text NOT NULL,
  table_name     text NOT NULL,
  file_location  text NOT NULL,
  file_name      text NOT NULL,
  size           bigint NOT NULL,
  etag           text NOT NULL,
  status         text NOT NULL CHECK (status IN ('LOADED', 'PARTIALLY_LOADED')),
  rows_parsed    bigint NOT NULL,
  rows_loaded    bigint NOT NULL,
  errors_seen    bigint NOT NULL,
  first_error    text,
  query_id       text NOT NULL,
  principal_id   uuid,
  snapshot_id    bigint,
  loaded_at      timestamptz NOT NULL
);
CREATE INDEX copy_history_file ON copy_history (tenant_id, table_uuid, file_location);
CREATE INDEX copy_history_time ON copy_history (tenant_id, loaded_at);
