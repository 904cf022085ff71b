-- Query history: one row per statement received by the query interface, from `queued` to a
-- terminal status. The SQL text is redacted before it is written. Rows are written behind the
-- request in small batches (engine/history), upserted by query_id.

CREATE TABLE query_history (
  query_id        uuid PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  user_id         text NOT NULL,
  user_name       text NOT NULL,
  status          text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  sql             text NOT NULL,
  query_type      text NOT NULL,
  workload_class  text,
  resource_group  text,
  priority        integer,
  warehouse       text,
  source          text,
  queued_at       timestamptz NOT NULL,
  started_at      timestamptz,
  ended_at        timestamptz,
  duration_ms     bigint,
  rows_produced   bigint,
  bytes_scanned   bigint,
  fragments       integer,
  error_code      text,
  sql_state       text,
  error_message   text,
  cu_consumed     double precision
);
-- The listings read a tenant's (or one user's) newest rows first.
CREATE INDEX query_history_tenant_recent ON query_history (tenant_id, queued_at DESC, query_id);
CREATE INDEX query_history_user_recent ON query_history (tenant_id, user_id, queued_at DESC, query_id);
