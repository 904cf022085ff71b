-- Invalid statements: Queries.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:1 expected: SELECT, VALUES, "(", EXPLAIN, INSERT, UPDATE, DELETE, MERGE, COPY, LIST, LS, REMOVE, RM, CREATE, DROP, ALTER, SHOW, DESCRIBE, DESC, USE, SET, RESET, GRANT, REVOKE, UNDROP, EXPUNGE or REDEEM

----
-- error 1:1 expected: SELECT, VALUES, "(", EXPLAIN, INSERT, UPDATE, DELETE, MERGE, COPY, LIST, LS, REMOVE, RM, CREATE, DROP, ALTER, SHOW, DESCRIBE, DESC, USE, SET, RESET, GRANT, REVOKE, UNDROP, EXPUNGE or REDEEM
;
----
-- error 1:7 expected: "*" or an expression
SELECT
----
-- error 1:8 expected: "*" or an expression
SELECT FROM t
----
-- error 1:14 expected: "(" or an identifier
SELECT a FROM
----
-- error 1:10 expected: "*" or an expression
SELECT a,, b FROM t
----
-- error 1:22 expected: an expression
SELECT a FROM t WHERE
----
-- error 1:12 expected: the end of the statement
SELECT a b c FROM t
----
-- error 1:23 expected: BY
SELECT * FROM t GROUP a
----
-- error 1:15 expected: ")"
SELECT (1 + 2 FROM t
----
-- error 1:11 expected: an expression
SELECT 1 +
----
-- error 1:23 expected: BY
SELECT a FROM t ORDER a
----
-- error 1:22 expected: an expression
SELECT a FROM t LIMIT
----
-- error 1:27 expected: END
SELECT CASE WHEN a THEN 1 FROM t
----
-- error 1:13 expected: WHEN
SELECT CASE END
----
-- error 1:15 expected: AS
SELECT CAST(a int) FROM t
----
-- error 1:17 expected: a data type
SELECT CAST(a AS) FROM t
----
-- error 1:18 expected: a data type
SELECT CAST(a AS integr) FROM t
----
-- error 1:23 expected: ON or USING
SELECT * FROM t JOIN u
----
-- error 1:22 expected: JOIN
SELECT * FROM t LEFT u ON t.a = u.a
----
-- error 1:32 expected: the end of the statement
SELECT * FROM t NATURAL JOIN u ON t.a = u.a
----
-- error 1:30 expected: the end of the statement
SELECT * FROM t CROSS JOIN u USING (a)
----
-- error 1:20 expected: the end of the statement
SELECT * FROM t t2 t3
----
-- error 1:22 expected: SELECT, VALUES or "("
SELECT * FROM t UNION
----
-- error 1:20 expected: SELECT, VALUES or "("
SELECT 1 UNION ALL ALL SELECT 2
----
-- error 1:8 expected: AS
WITH x SELECT 1
----
-- error 1:11 expected: "("
WITH x AS SELECT 1
----
-- error 1:23 expected: an identifier
WITH x AS (SELECT 1), SELECT * FROM x
----
-- error 1:29 expected: SELECT, VALUES or an expression
SELECT a FROM t WHERE a IN ()
----
-- error 1:20 expected: AND
SELECT a BETWEEN 1 FROM t
----
-- error 1:14 expected: LIKE, ILIKE, BETWEEN or IN
SELECT a NOT FROM t
----
-- error 1:27 expected: BETWEEN, UNBOUNDED, CURRENT or an expression
SELECT count(*) OVER (ROWS) FROM t
----
-- error 1:56 expected: AND
SELECT sum(x) OVER (ORDER BY y ROWS BETWEEN 1 PRECEDING) FROM t
----
-- error 1:29 expected: AS
SELECT * FROM t FOR VERSION 3
----
-- error 1:34 expected: OF
SELECT * FROM t FOR TIMESTAMP AS 3
----
-- error 1:18 expected: the end of the statement
SELECT a FROM t; SELECT b FROM u
----
-- error 1:17 expected: the end of the statement
SELECT a FROM t;;
----
-- error 1:12 expected: the end of the statement
SELECT 'x' 'y'
----
-- error 1:11 expected: "*", an identifier or a positional column
SELECT a. FROM t
----
-- error 1:24 expected: an expression
SELECT a FROM t QUALIFY
----
-- error 1:20 expected: "("
SELECT DISTINCT ON a FROM t
----
-- error 1:35 expected: ONLY
SELECT a FROM t FETCH FIRST 1 ROWS
----
-- error 1:13 expected: the end of the statement
SELECT DATE 5
----
-- error 1:12 expected: a data type
SELECT a:: FROM t
----
-- error 1:14 expected: "]"
SELECT [1, 2 FROM t
----
-- error 1:13 expected: ":"
SELECT {'a' 1}
----
-- error 1:8 expected: "*" or an expression
SELECT select
----
-- error 1:31 expected: "("
SELECT a FROM t WHERE a = ANY SELECT 1
----
-- error 1:40 expected: "("
SELECT a FROM t GROUP BY GROUPING SETS a
----
-- error 1:10 expected: an operator
SELECT a ESCAPE 'x' FROM t
----
-- error 1:45 expected: an operator
SELECT a FROM t WHERE x LIKE 'a' ESCAPE '!' ESCAPE '?'
----
-- error 1:22 expected: an expression
SELECT count(DISTINCT) FROM t
----
-- error 1:12 expected: an expression
SELECT f(a,) FROM t
----
-- error 1:33 expected: FIRST or LAST
SELECT a FROM t ORDER BY a NULLS
----
-- error 1:26 expected: AS
SELECT a FROM t WINDOW w (ORDER BY a)
----
-- error 1:16 expected: an identifier or ")"
SELECT extract(FROM d) FROM t
----
-- error 4:3 expected: an expression, ANY, SOME or ALL
SELECT a
FROM t
WHERE b =
  AND c = 1
----
-- error 5:8 expected: an expression
SELECT a,
       b
  FROM t
 GROUP BY a
 HAVING
----
-- error 4:1 expected: ON or USING
SELECT *
FROM orders o
JOIN customer c
WHERE o.id = c.id
----
-- error 6:3 expected: SELECT, VALUES or "("
WITH
  x AS (SELECT 1),
  y AS (SELECT 2)
SELECT * FROM x
  UNION
  ORDER BY 1
----
-- error 1:8 expected: SELECT, VALUES, "(", INSERT, UPDATE, DELETE or MERGE
EXPLAIN
----
-- error 1:9 expected: SELECT, VALUES, "(", INSERT, UPDATE, DELETE or MERGE
EXPLAIN CREATE TABLE t (a int)
----
-- error 1:17 expected: SELECT, VALUES, "(", INSERT, UPDATE, DELETE or MERGE
EXPLAIN ANALYZE ANALYZE SELECT 1
----
-- DuckDB has no schema-qualified star: only t.* is accepted.
-- error 1:12 expected: an identifier or a positional column
SELECT s.t.* FROM s.t
----
-- DuckDB has no BETWEEN SYMMETRIC (SYMMETRIC is reserved).
-- error 1:33 expected: an expression
SELECT * FROM t WHERE a BETWEEN SYMMETRIC 10 AND 1
----
-- error 1:72 expected: at most 64 levels of nesting
SELECT ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
----
-- Comparisons do not associate (as in DuckDB).
-- error 1:14 expected: parentheses around the left operand
SELECT a = b = c FROM t
----
-- error 1:20 expected: parentheses around the left operand
SELECT a LIKE 'x%' NOT IN (1) FROM t
----
-- error 1:26 expected: parentheses around the BETWEEN bound
SELECT x BETWEEN 1 AND 2 - NOT y FROM t
----
-- DEFAULT is a value only where a value can be DEFAULT; bare, it names the catalog only before a dot.
-- error 1:16 expected: "."
SELECT default FROM t
