-- Invalid statements: DML.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:8 expected: INTO
INSERT t VALUES (1)
----
-- error 1:21 expected: "("
INSERT INTO t VALUES
----
-- error 1:18 expected: an identifier
INSERT INTO t (a,) VALUES (1)
----
-- error 1:26 expected: "("
INSERT INTO t VALUES (1), 
----
-- error 1:12 expected: SET
UPDATE t a = 1
----
-- error 1:15 expected: "="
UPDATE t SET a
----
-- error 1:14 expected: an identifier
UPDATE t SET = 1
----
-- error 1:8 expected: FROM
DELETE t
----
-- error 1:20 expected: an expression
DELETE FROM t WHERE
----
-- error 1:22 expected: ON
MERGE INTO t USING s WHEN MATCHED THEN DELETE
----
-- error 1:34 expected: WHEN
MERGE INTO t USING s ON t.a = s.a
----
-- error 1:53 expected: UPDATE, DELETE or DO
MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN INSERT VALUES (1)
----
-- error 1:57 expected: INSERT or DO
MERGE INTO t USING s ON t.a = s.a WHEN NOT MATCHED THEN DELETE
----
-- error 1:17 expected: a stage reference, a string literal or "("
COPY INTO t FROM
----
-- error 1:35 expected: "("
COPY INTO t FROM @s FILE_FORMAT = TYPE = CSV
----
-- error 1:36 expected: another clause
COPY INTO t FROM @s PATTERN = '.*' PATTERN = 'x'
----
-- error 1:6 expected: INTO
COPY t FROM @s
----
-- error 1:48 expected: another clause
COPY INTO t FROM @s FILE_FORMAT = (TYPE = CSV) FILE_FORMAT = (TYPE = JSON)
