-- DDL: schemas (namespaces), tables with every Iceberg type and partition transform, views.
CREATE SCHEMA sales
----
CREATE SCHEMA IF NOT EXISTS lake.sales
----
CREATE NAMESPACE analytics.events
----
CREATE DATABASE IF NOT EXISTS db1
----
CREATE SCHEMA sales WITH (owner = 'team-a', 'location' = 's3://bucket/sales')
----
DROP SCHEMA sales
----
DROP SCHEMA IF EXISTS lake.sales CASCADE
----
DROP NAMESPACE analytics.events RESTRICT
----
DROP DATABASE IF EXISTS db1
----
CREATE TABLE t (a int)
----
CREATE TABLE sales.all_types (
  c_boolean boolean,
  c_int int,
  c_integer integer,
  c_bigint bigint,
  c_long long,
  c_float float,
  c_real real,
  c_double double,
  c_double_precision double precision,
  c_decimal decimal(38, 10),
  c_numeric numeric(9, 2),
  c_decimal_p decimal(10),
  c_date date,
  c_time time,
  c_timestamp timestamp,
  c_timestamp_ntz timestamp without time zone,
  c_timestamptz timestamptz,
  c_timestamp_tz timestamp with time zone,
  c_string string,
  c_varchar varchar,
  c_varchar_n varchar(255),
  c_text text,
  c_uuid uuid,
  c_binary binary,
  c_varbinary varbinary,
  c_fixed fixed(16)
)
----
CREATE TABLE nested (
  id bigint NOT NULL COMMENT 'primary id',
  tags list<string>,
  scores array<double>,
  arr int[],
  attrs map<string, string>,
  counts map(string, bigint),
  address struct<street: string NOT NULL, city: string COMMENT 'city name', zip: int>,
  point struct(x double, y double),
  deep list<struct<k: string, v: map<string, list<int>>>>
)
----
CREATE TABLE IF NOT EXISTS lake.sales.orders (
  id bigint NOT NULL,
  customer_id bigint,
  amount decimal(12, 2) NOT NULL COMMENT 'order total',
  ordered_at timestamptz,
  region string NULL
)
PARTITIONED BY (region, bucket(16, customer_id), truncate(4, region), day(ordered_at))
COMMENT 'all orders'
WITH ('write.format.default' = 'parquet', format_version = 2)
----
CREATE TABLE events (ts timestamp, id bigint, kind string) PARTITIONED BY (year(ts), month(ts), hour(ts), identity(kind))
----
CREATE TABLE events2 (ts timestamp, id bigint, kind string) PARTITIONED BY (years(ts), months(ts), days(ts), hours(ts), void(id))
----
CREATE TABLE t3 (a int) USING iceberg LOCATION 's3://bucket/t3' TBLPROPERTIES ('commit.retry.num-retries' = 4)
----
CREATE TABLE t4 (a int) COMMENT = 'with equals' LOCATION = 's3://b/t4' PROPERTIES (write.format.default = 'parquet', 'write.target-file-size-bytes' = 536870912)
----
CREATE OR REPLACE TABLE t5 (a int, "Mixed" string)
----
CREATE TABLE t6 AS SELECT * FROM t
----
CREATE TABLE IF NOT EXISTS t7 (x, y) PARTITIONED BY (x) AS SELECT a, b FROM t WHERE a > 1
----
CREATE OR REPLACE TABLE sales.summary WITH (format_version = 2) AS WITH s AS (SELECT region, sum(amount) AS total FROM sales.orders GROUP BY region) SELECT * FROM s
----
DROP TABLE t
----
DROP TABLE IF EXISTS lake.sales.orders
----
DROP TABLE sales.orders PURGE
----
DROP TABLE IF EXISTS t PURGE;
----
ALTER TABLE t ADD COLUMN c string
----
ALTER TABLE t ADD c2 decimal(10, 2) NOT NULL COMMENT 'money'
----
ALTER TABLE IF EXISTS t ADD COLUMN IF NOT EXISTS address.zip int
----
ALTER TABLE t ADD COLUMN s struct<a: int, b: list<string>>
----
ALTER TABLE t DROP COLUMN c
----
ALTER TABLE t DROP c2
----
ALTER TABLE t DROP COLUMN IF EXISTS address.zip
----
ALTER TABLE t RENAME COLUMN c TO d
----
ALTER TABLE t RENAME COLUMN address.street TO street_name
----
ALTER TABLE t RENAME TO t_old
----
ALTER TABLE lake.sales.t RENAME TO sales.t_new
----
ALTER TABLE t ALTER COLUMN a TYPE bigint
----
ALTER TABLE t ALTER COLUMN f SET DATA TYPE double
----
ALTER TABLE t ALTER d TYPE decimal(20, 2)
----
ALTER TABLE t ALTER COLUMN a DROP NOT NULL
----
ALTER TABLE t SET TBLPROPERTIES ('write.format.default' = 'orc', 'commit.retry.num-retries' = 10)
----
ALTER TABLE t SET PROPERTIES (write.metadata.compression_codec = gzip, 'read.split.target-size' = 134217728)
----
ALTER TABLE t UNSET TBLPROPERTIES ('write.format.default')
----
ALTER TABLE t UNSET PROPERTIES IF EXISTS ('a', b.c)
----
CREATE VIEW v AS SELECT * FROM t
----
CREATE OR REPLACE VIEW sales.v_totals (region, total) COMMENT 'per region' AS SELECT region, sum(amount) FROM sales.orders GROUP BY region
----
CREATE VIEW IF NOT EXISTS v2 COMMENT = 'x' AS WITH a AS (SELECT 1 AS x) SELECT x FROM a
----
DROP VIEW v
----
DROP VIEW IF EXISTS sales.v_totals
----
SHOW CATALOGS
----
SHOW CATALOGS LIKE 'la%'
----
SHOW SCHEMAS
----
SHOW SCHEMAS IN lake
----
SHOW NAMESPACES FROM lake LIKE 'sa%'
----
SHOW DATABASES
----
SHOW TABLES
----
SHOW TABLES IN sales
----
SHOW TABLES FROM lake.sales LIKE 'ord%'
----
SHOW VIEWS
----
SHOW VIEWS IN lake.sales LIKE '%totals'
----
DESCRIBE sales.orders
----
DESCRIBE TABLE lake.sales.orders
----
DESC orders
----
USE lake
----
USE lake.sales
----
-- Constraints people paste in: PRIMARY KEY and NOT NULL are kept, the others parse to be refused (0A000).
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, note string)
----
CREATE TABLE IF NOT EXISTS lake.sales.lines (
  order_id bigint,
  line int CONSTRAINT line_nn NOT NULL,
  amount decimal(12, 2) NULL,
  CONSTRAINT lines_pk PRIMARY KEY (order_id, line)
) PARTITIONED BY (bucket(16, order_id))
----
CREATE TABLE t (
  id int CONSTRAINT t_pk PRIMARY KEY NOT ENFORCED RELY,
  email varchar(200) UNIQUE,
  qty int CHECK (qty > 0) DEFAULT 1 + 1 NOT NULL,
  status string DEFAULT 'new' COLLATE "C",
  customer_id bigint REFERENCES customers (id) MATCH SIMPLE ON DELETE CASCADE ON UPDATE NO ACTION,
  region_id int CONSTRAINT fk_region REFERENCES regions ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
  total double GENERATED ALWAYS AS (qty * 2.5) STORED,
  serial bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 1 INCREMENT BY 1),
  n int AUTOINCREMENT,
  UNIQUE (email, status),
  CONSTRAINT positive CHECK (qty >= 0 AND total >= 0),
  FOREIGN KEY (customer_id, region_id) REFERENCES customer_regions (customer, region) ON DELETE RESTRICT
)
----
ALTER TABLE t ADD COLUMN c int DEFAULT 0 CHECK (c >= 0)
----
CREATE INDEX orders_customer ON orders (customer_id)
----
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS idx ON lake.sales.orders USING btree (lower(email) DESC NULLS LAST, id) INCLUDE (note) WHERE id > 0
----
CREATE INDEX ON t (a)
----
DROP INDEX IF EXISTS lake.sales.idx CASCADE
----
DROP INDEX idx
----
USE default
----
USE default.tpch
----
SHOW SCHEMAS IN default
----
SHOW TABLES FROM default.tpch LIKE 'n%'
----
CREATE TABLE default.tpch.t (a int)
----
DESCRIBE default.tpch.nation
