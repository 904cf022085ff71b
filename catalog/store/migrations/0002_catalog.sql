-- The Iceberg REST catalog: catalogs (warehouses) per tenant, multi-level namespaces, tables and
-- views (one row each, pointing at the current metadata file), scan-metrics reports and
-- idempotency keys. Everything is keyed by tenant_id. Names that clients list in pages are
-- `COLLATE "C"` so keyset pagination orders by bytes on both backends.

CREATE TABLE catalogs (
  id                  uuid PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id),
  name                text COLLATE "C" NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  warehouse_location  text NOT NULL,
  properties          jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- [{ "from": "s3a://bucket/", "to": "file:///data/" }, ...] applied by FileIO when reading.
  location_mappings   jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX catalogs_tenant_name ON catalogs (tenant_id, name);

-- A namespace is identified by its levels joined with the unit separator (0x1F), the same
-- character the REST paths use between levels, so the key is one comparable string.
CREATE TABLE catalog_namespaces (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  catalog_id     uuid NOT NULL REFERENCES catalogs(id) ON DELETE CASCADE,
  namespace_key  text COLLATE "C" NOT NULL,
  levels         text[] NOT NULL,
  -- The parent's key; '' for a top-level namespace.
  parent_key     text COLLATE "C" NOT NULL,
  properties     jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (catalog_id, namespace_key)
);
CREATE INDEX catalog_namespaces_parent ON catalog_namespaces (catalog_id, parent_key, namespace_key);

-- Tables and views share one name space per namespace (as in Java's catalogs), so they share a row
-- type; `kind` tells them apart. The row is the commit pointer: a commit locks it (FOR UPDATE) and
-- swaps metadata_location by compare-and-swap.
CREATE TABLE catalog_entities (
  id                 uuid PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants(id),
  catalog_id         uuid NOT NULL,
  namespace_key      text COLLATE "C" NOT NULL,
  name               text COLLATE "C" NOT NULL,
  kind               text NOT NULL CHECK (kind IN ('table', 'view')),
  metadata_location  text NOT NULL,
  -- How many commits the row has taken: cheap change detection (ETags) and diagnostics.
  version            bigint NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (catalog_id, namespace_key) REFERENCES catalog_namespaces (catalog_id, namespace_key) ON UPDATE CASCADE ON DELETE RESTRICT
);
CREATE UNIQUE INDEX catalog_entities_name ON catalog_entities (catalog_id, namespace_key, name);
CREATE INDEX catalog_entities_list ON catalog_entities (catalog_id, namespace_key, kind, name);

-- Client-side scan and commit reports (POST .../metrics): accepted and kept for operators.
CREATE TABLE catalog_metrics_reports (
  id           bigserial PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  catalog_id   uuid NOT NULL REFERENCES catalogs(id) ON DELETE CASCADE,
  entity_id    uuid,
  report_type  text NOT NULL,
  report       jsonb NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX catalog_metrics_reports_entity ON catalog_metrics_reports (catalog_id, entity_id, received_at);

-- Idempotency-Key replay: the final response of a mutating request (2xx and deterministic 4xx),
-- kept until expires_at. `request_hash` binds the key to the operation it was first used for.
CREATE TABLE catalog_idempotency_keys (
  tenant_id        text NOT NULL REFERENCES tenants(id),
  idempotency_key  text NOT NULL,
  request_hash     text NOT NULL,
  status           integer NOT NULL,
  response_body    text,
  response_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, idempotency_key)
);
CREATE INDEX catalog_idempotency_keys_expiry ON catalog_idempotency_keys (expires_at);
