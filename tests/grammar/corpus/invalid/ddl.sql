-- Invalid statements: DDL, SHOW, DESCRIBE, USE.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:17 expected: PRIMARY, UNIQUE, CHECK, FOREIGN or an identifier
CREATE TABLE t ()
----
-- error 1:19 expected: AS
CREATE TABLE t (a)
----
-- error 1:23 expected: an identifier, PRIMARY, UNIQUE, CHECK or FOREIGN
CREATE TABLE t (a int,)
----
-- error 1:30 expected: an integer
CREATE TABLE t (a decimal(10,))
----
-- error 1:24 expected: "("
CREATE TABLE t (a fixed)
----
-- error 1:29 expected: ","
CREATE TABLE t (a map<string>)
----
-- error 1:25 expected: "<" or "("
CREATE TABLE t (a struct<>)
----
-- error 1:27 expected: ">"
CREATE TABLE t (a list<int)
----
-- error 1:47 expected: an integer
CREATE TABLE t (a int) PARTITIONED BY (bucket(a))
----
-- error 1:49 expected: ","
CREATE TABLE t (a int) PARTITIONED BY (bucket(16))
----
-- error 1:43 expected: ")"
CREATE TABLE t (a int) PARTITIONED BY (foo(a))
----
-- error 1:40 expected: BUCKET, TRUNCATE, YEARS, YEAR, MONTHS, MONTH, DAYS, DAY, HOURS, HOUR, IDENTITY, VOID or an identifier
CREATE TABLE t (a int) PARTITIONED BY ()
----
-- error 1:36 expected: another clause
CREATE TABLE t (a int) COMMENT 'x' COMMENT 'y'
----
-- error 1:26 expected: NULL
CREATE TABLE t (a int NOT)
----
-- error 3:21 expected: "," or ")"
CREATE TABLE t (
  id bigint,
  amount decimal(12 2)
)
----
-- error 1:14 expected: an identifier
CREATE SCHEMA
----
-- error 1:18 expected: the end of the statement
CREATE SCHEMA IF EXISTS s
----
-- error 1:23 expected: the end of the statement
DROP SCHEMA s CASCADE RESTRICT
----
-- error 1:11 expected: an identifier
DROP TABLE
----
-- error 1:14 expected: the end of the statement
DROP TABLE t CASCADE
----
-- error 1:25 expected: an identifier
ALTER TABLE t ADD COLUMN
----
-- error 1:22 expected: COLUMN or TO
ALTER TABLE t RENAME c TO d
----
-- error 1:34 expected: DATA
ALTER TABLE t ALTER COLUMN a SET TYPE int
----
-- error 1:34 expected: a string literal or a name
ALTER TABLE t SET TBLPROPERTIES ()
----
-- error 1:14 expected: ADD, DROP, RENAME, ALTER, SET or UNSET
ALTER TABLE t
----
-- error 1:14 expected: AS
CREATE VIEW v
----
-- error 1:17 expected: SELECT, VALUES or "("
CREATE VIEW v AS
----
-- error 1:10 expected: an identifier
DROP VIEW
----
-- error 1:19 expected: TABLE or VIEW
CREATE OR REPLACE SCHEMA s
----
-- error 1:6 expected: QUERY, RESOURCE, USERS, SERVICE, PERSONAL, WEBHOOKS, CATALOGS, SCHEMAS, NAMESPACES, DATABASES, TABLES, VIEWS or STAGES
SHOW TABLE
----
-- error 1:15 expected: an identifier
SHOW TABLES IN
----
-- error 1:18 expected: a string literal
SHOW TABLES LIKE x
----
-- error 1:9 expected: USER, TABLE or an identifier
DESCRIBE
----
-- error 1:4 expected: an identifier
USE
----
-- error 1:18 expected: SELECT, VALUES or "("
CREATE TABLE t AS
----
-- error 1:30 expected: KEY
CREATE TABLE t (a int PRIMARY)
----
-- error 1:36 expected: PRIMARY, UNIQUE, CHECK or FOREIGN
CREATE TABLE t (a int, CONSTRAINT c)
----
-- error 1:36 expected: "("
CREATE TABLE t (a int, PRIMARY KEY a)
----
-- error 1:48 expected: at most one PRIMARY KEY table constraint
CREATE TABLE t (a int, b int, PRIMARY KEY (a), PRIMARY KEY (b))
----
-- error 1:35 expected: one PRIMARY KEY per column
CREATE TABLE t (a int PRIMARY KEY PRIMARY KEY)
----
-- error 1:16 expected: ON
CREATE INDEX i (a)
----
-- error 1:21 expected: "("
CREATE INDEX i ON t a
