-- DML: INSERT, UPDATE, DELETE, MERGE INTO, COPY INTO.
INSERT INTO t VALUES (1, 'a')
----
INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL)
----
INSERT INTO lake.sales.orders (id, amount, note) VALUES (1, 9.99, 'first')
----
INSERT INTO t (a, b) SELECT x, y FROM u WHERE x > 0
----
INSERT INTO t SELECT * FROM u UNION ALL SELECT * FROM v
----
INSERT INTO t WITH s AS (SELECT 1 AS a) SELECT a FROM s
----
INSERT INTO t DEFAULT VALUES
----
INSERT INTO "Mixed Case"."Table" ("Col") VALUES ('x');
----
INSERT INTO t (ts, d) VALUES (TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01')
----
UPDATE t SET a = 1
----
UPDATE t SET a = a + 1, b = 'x' WHERE id = 7
----
UPDATE t AS x SET a = DEFAULT WHERE x.id IN (SELECT id FROM u)
----
UPDATE t x SET b = u.b FROM u WHERE x.id = u.id
----
UPDATE sales.orders SET status = 'shipped', shipped_at = now() FROM sales.shipments s, sales.carriers c WHERE orders.id = s.order_id AND s.carrier = c.id
----
UPDATE t SET s.inner_field = 3 WHERE TRUE
----
DELETE FROM t
----
DELETE FROM t WHERE id = 1
----
DELETE FROM sales.orders AS o WHERE o.created < DATE '2020-01-01'
----
DELETE FROM t USING u WHERE t.id = u.id
----
DELETE FROM t x USING u, v WHERE x.id = u.id AND u.k = v.k
----
DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)
----
MERGE INTO target t USING source s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)
----
MERGE INTO sales.orders AS t
USING (SELECT * FROM staging.orders WHERE batch = 7) AS s
ON t.id = s.id
WHEN MATCHED AND s.deleted THEN DELETE
WHEN MATCHED AND s.v > t.v THEN UPDATE SET v = s.v, updated = now()
WHEN MATCHED THEN DO NOTHING
WHEN NOT MATCHED AND s.v IS NOT NULL THEN INSERT VALUES (s.id, s.v, DEFAULT)
WHEN NOT MATCHED THEN DO NOTHING
----
MERGE INTO t USING s ON t.k = s.k WHEN NOT MATCHED BY TARGET THEN INSERT (k) VALUES (s.k)
----
MERGE INTO t USING lake.staging.s FOR VERSION AS OF 42 ON t.k = s.k WHEN MATCHED THEN DELETE
----
COPY INTO sales.orders FROM @orders_stage
----
COPY INTO sales.orders FROM @orders_stage/2024/06/ FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1, FIELD_DELIMITER = '|') PATTERN = '.*[.]csv'
----
COPY INTO orders (id, amount) FROM 's3://bucket/path/' FILE_FORMAT = (TYPE = PARQUET)
----
COPY INTO orders FROM 's3://bucket/data.json' FILE_FORMAT=(TYPE=JSON) PATTERN='.*'
----
COPY INTO orders FROM @stage FILE_FORMAT (TYPE CSV COMPRESSION GZIP NULL_IF '' EMPTY_FIELD_AS_NULL TRUE) PATTERN '.*csv.gz'
----
COPY INTO orders FROM @stage PATTERN = '.*' FILE_FORMAT = (type = 'csv', skip_header = -1, trim_space = false)
----
COPY INTO lake.raw.events FROM 'file:///data/events/'
----
INSERT INTO default.tpch.t (a) SELECT n_nationkey FROM default.tpch.nation
----
UPDATE default.tpch.t SET a = DEFAULT WHERE a > 1
----
INSERT INTO default.tpch.t DEFAULT VALUES
