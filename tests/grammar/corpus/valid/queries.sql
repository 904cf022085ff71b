-- Queries: SELECT blocks, expressions, joins, subqueries, grouping, windows, set operations.
-- Statements are separated by a line holding exactly four dashes (see docs/grammar.md).
SELECT 1
----
SELECT 1;
----
select a, b from t
----
SELECT * FROM t
----
SELECT t.* FROM t
----
SELECT t.* EXCLUDE (a) FROM s.t
----
SELECT * EXCLUDE (a, b) FROM t
----
SELECT DISTINCT a FROM t
----
SELECT ALL a FROM t
----
SELECT DISTINCT ON (a, b) a, b, c FROM t ORDER BY a, b, c DESC
----
SELECT a AS x, b y, c AS "Quoted Alias" FROM t
----
SELECT "Weird ""col""", "select" FROM "Cat"."Sch"."Tbl"
----
SELECT c FROM lake.analytics.events
----
SELECT c FROM analytics.events AS e
----
-- a leading comment
SELECT a /* inline */ FROM t -- trailing comment
----
/* block comment
   over two lines */
SELECT a
FROM t
----
SELECT 1 + 2 * 3 - 4 / 5 % 6
----
SELECT (1 + 2) * 3, -a, +b, - -c, -(a + b)
----
SELECT a || b || 'suffix' FROM t
----
SELECT 'it''s', E'tab\there', E'quote\'s', e'new\nline', '' FROM t
----
SELECT 42, 3.14, .5, 1e10, 2.5E-3, 1.e3 FROM t
----
SELECT TRUE, FALSE, NULL
----
SELECT a = 1, a <> 2, a != 3, a < 4, a <= 5, a > 6, a >= 7 FROM t
----
SELECT a AND b OR NOT c FROM t
----
SELECT NOT a = b, NOT NOT c FROM t
----
SELECT * FROM t WHERE a LIKE 'x%' AND b NOT LIKE '%y' AND c ILIKE 'Z_' AND d NOT ILIKE 'w'
----
SELECT * FROM t WHERE a LIKE 'x!%%' ESCAPE '!'
----
SELECT * FROM t WHERE a IN (1, 2, 3) AND b NOT IN ('x', 'y')
----
SELECT * FROM t WHERE a IN (SELECT a FROM u) AND b NOT IN (SELECT b FROM v WHERE v.c = t.c)
----
SELECT * FROM t WHERE a BETWEEN 1 AND 10 AND b NOT BETWEEN 'a' AND 'm'
----
SELECT * FROM t WHERE a NOT BETWEEN b AND c OR d BETWEEN -1 AND +1
----
SELECT * FROM t WHERE a BETWEEN 1 + 1 AND 2 * 5
----
SELECT a IS NULL, a IS NOT NULL, b IS TRUE, b IS NOT TRUE, b IS FALSE, b IS NOT FALSE, b IS UNKNOWN FROM t
----
SELECT a IS DISTINCT FROM b, a IS NOT DISTINCT FROM b FROM t
----
SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END FROM t
----
SELECT CASE WHEN a > 10 THEN 'big' WHEN a > 5 THEN 'medium' END FROM t
----
SELECT CASE WHEN a IS NULL THEN CASE WHEN b THEN 1 ELSE 2 END ELSE 3 END FROM t
----
SELECT CAST(a AS integer), CAST(b AS varchar), TRY_CAST(c AS double), d::date, e::decimal(10, 2) FROM t
----
SELECT CAST(a AS timestamp with time zone), CAST(b AS double precision), CAST(c AS character varying(20)) FROM t
----
SELECT a::int::bigint, CAST(b AS int[]), c::varchar[] FROM t
----
SELECT extract(year FROM d), EXTRACT(month FROM d), extract(epoch FROM ts) FROM t
----
SELECT substring(s FROM 2 FOR 3), substring(s FROM 5), substring(s, 1, 2) FROM t
----
SELECT DATE '2024-01-31', TIME '12:34:56', TIMESTAMP '2024-01-31 12:34:56', TIMESTAMPTZ '2024-01-31 12:34:56+02', TIMESTAMP WITH TIME ZONE '2024-01-31 00:00:00+00'
----
SELECT INTERVAL '3' DAY, INTERVAL 2 HOURS, INTERVAL '1 year 2 months', INTERVAL (n * 2) MINUTE FROM t
----
SELECT d + INTERVAL '1' MONTH, d - INTERVAL 7 DAYS, ts + INTERVAL '90' SECOND FROM t
----
SELECT INTERVAL 1 WEEK, INTERVAL 1 MILLISECOND, INTERVAL 5 MICROSECONDS, INTERVAL 3 YEARS
----
SELECT [1, 2, 3], [], {'a': 1, 'b': 'x'}, {k: 2}, l[1], l[i + 1], m['key'] FROM t
----
SELECT (a, b) IN ((1, 2), (3, 4)) FROM t
----
SELECT count(*), count(a), count(DISTINCT a), sum(b), avg(c), min(d), max(e) FROM t
----
SELECT count(*) FILTER (WHERE a > 1), sum(b) FILTER (WHERE c IS NOT NULL) FROM t
----
SELECT string_agg(name, ', ' ORDER BY name DESC NULLS FIRST), array_agg(DISTINCT x ORDER BY x) FROM t
----
SELECT lower(a), upper(b), coalesce(c, d, 0), nullif(e, ''), round(f, 2), length(g), now() FROM t
----
SELECT left(s, 3), right(s, 2) FROM t
----
SELECT my_schema.my_func(a, b) FROM t
----
SELECT row_number() OVER (ORDER BY a) FROM t
----
SELECT rank() OVER (PARTITION BY a ORDER BY b DESC), dense_rank() OVER (PARTITION BY a, c ORDER BY b) FROM t
----
SELECT sum(x) OVER (PARTITION BY g ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t
----
SELECT avg(x) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING) FROM t
----
SELECT sum(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) FROM t
----
SELECT count(*) OVER (ORDER BY g GROUPS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM t
----
SELECT sum(x) OVER (ORDER BY ts ROWS 5 PRECEDING EXCLUDE NO OTHERS), sum(x) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING EXCLUDE GROUP) FROM t
----
SELECT sum(x) OVER (ORDER BY ts RANGE CURRENT ROW EXCLUDE TIES) FROM t
----
SELECT sum(x) OVER w, avg(x) OVER w FROM t WINDOW w AS (PARTITION BY g ORDER BY ts)
----
SELECT sum(x) OVER (w ROWS 2 PRECEDING) FROM t WINDOW w AS (PARTITION BY g ORDER BY ts), w2 AS (w)
----
SELECT lag(x, 1) OVER (PARTITION BY g ORDER BY ts), lead(x) OVER (ORDER BY ts), first_value(x) OVER (ORDER BY ts) FROM t
----
SELECT count(*) FILTER (WHERE x > 0) OVER (PARTITION BY g) FROM t
----
SELECT a FROM t WHERE b = (SELECT max(b) FROM t)
----
SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a) AS n FROM t
----
SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)
----
SELECT * FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE u.id = t.id)
----
SELECT * FROM t WHERE a > ALL (SELECT a FROM u) AND b = ANY (SELECT b FROM v) AND c < SOME (SELECT c FROM w)
----
SELECT * FROM t WHERE a <> ALL (SELECT a FROM u WHERE u.g = t.g)
----
SELECT * FROM a JOIN b ON a.id = b.id
----
SELECT * FROM a INNER JOIN b ON a.id = b.id AND a.x > b.x
----
SELECT * FROM a LEFT JOIN b ON a.id = b.id LEFT OUTER JOIN c ON b.id = c.id
----
SELECT * FROM a RIGHT JOIN b ON a.id = b.id RIGHT OUTER JOIN c USING (id)
----
SELECT * FROM a FULL JOIN b USING (id, k) FULL OUTER JOIN c ON c.id = b.id
----
SELECT * FROM a CROSS JOIN b
----
SELECT * FROM a NATURAL JOIN b NATURAL LEFT JOIN c NATURAL FULL OUTER JOIN d
----
SELECT * FROM a, b, c WHERE a.id = b.id AND b.id = c.id
----
SELECT * FROM a JOIN (b JOIN c ON b.id = c.id) ON a.id = b.id
----
SELECT * FROM a, LATERAL (SELECT * FROM b WHERE b.a_id = a.id) AS s
----
SELECT * FROM a LEFT JOIN LATERAL (SELECT max(v) AS m FROM b WHERE b.a = a.id) s ON TRUE
----
SELECT x.a FROM (SELECT a FROM t) AS x
----
SELECT x.c1 FROM (SELECT a, b FROM t) x (c1, c2)
----
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name)
----
SELECT * FROM range(10) AS r(i)
----
SELECT * FROM generate_series(1, 5)
----
WITH x AS (SELECT 1 AS a) SELECT a FROM x
----
WITH x AS (SELECT 1 AS a), y (b) AS (SELECT a + 1 FROM x) SELECT * FROM x JOIN y ON x.a < y.b
----
WITH x AS MATERIALIZED (SELECT * FROM t), y AS NOT MATERIALIZED (SELECT * FROM u) SELECT * FROM x, y
----
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n) FROM r
----
WITH a AS (SELECT 1 AS v) SELECT * FROM (WITH b AS (SELECT v FROM a) SELECT * FROM b) q
----
SELECT g, count(*) FROM t GROUP BY g
----
SELECT g, h, sum(x) FROM t GROUP BY 1, 2
----
SELECT g, h, sum(x) FROM t GROUP BY ROLLUP (g, h)
----
SELECT g, h, sum(x) FROM t GROUP BY CUBE (g, h)
----
SELECT g, h, sum(x) FROM t GROUP BY GROUPING SETS ((g, h), (g), ())
----
SELECT g, h, sum(x) FROM t GROUP BY g, ROLLUP (h)
----
SELECT sum(x) FROM t GROUP BY ()
----
SELECT g, count(*) FROM t GROUP BY g HAVING count(*) > 1 AND sum(x) < 100
----
SELECT count(*) FROM t HAVING count(*) > 0
----
SELECT g, x FROM t QUALIFY row_number() OVER (PARTITION BY g ORDER BY x DESC) = 1
----
SELECT g, count(*) AS n FROM t WHERE x > 0 GROUP BY g HAVING count(*) > 2 WINDOW w AS (ORDER BY g) QUALIFY rank() OVER w < 3 ORDER BY n DESC LIMIT 5
----
SELECT a FROM t ORDER BY a
----
SELECT a FROM t ORDER BY a ASC NULLS FIRST, b DESC NULLS LAST, 1
----
SELECT a FROM t LIMIT 10
----
SELECT a FROM t LIMIT 10 OFFSET 20
----
SELECT a FROM t OFFSET 20 LIMIT 10
----
SELECT a FROM t ORDER BY a OFFSET 5 ROWS
----
SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY
----
SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 1 ROW ONLY
----
SELECT a FROM t UNION SELECT a FROM u
----
SELECT a FROM t UNION ALL SELECT a FROM u UNION DISTINCT SELECT a FROM v
----
SELECT a FROM t INTERSECT SELECT a FROM u
----
SELECT a FROM t INTERSECT ALL SELECT a FROM u
----
SELECT a FROM t EXCEPT SELECT a FROM u
----
SELECT a FROM t EXCEPT ALL SELECT a FROM u
----
SELECT 1 UNION SELECT 2 INTERSECT SELECT 3
----
SELECT 1 EXCEPT SELECT 2 UNION SELECT 3 INTERSECT SELECT 4 EXCEPT ALL SELECT 5
----
(SELECT 1 UNION SELECT 2) INTERSECT (SELECT 2 UNION SELECT 3)
----
SELECT a FROM t UNION (SELECT a FROM u ORDER BY a LIMIT 1) ORDER BY 1 LIMIT 3
----
(SELECT a FROM t ORDER BY a LIMIT 2)
----
VALUES (1, 'a'), (2, 'b')
----
VALUES (1) UNION ALL VALUES (2) ORDER BY 1
----
SELECT * FROM lake.sales.orders FOR VERSION AS OF 8744736658442914487
----
SELECT * FROM sales.orders FOR VERSION AS OF 'audit-branch' o
----
SELECT * FROM sales.orders FOR TIMESTAMP AS OF TIMESTAMP '2024-06-01 00:00:00' AS o WHERE o.amount > 0
----
SELECT * FROM sales.orders FOR SYSTEM_TIME AS OF '2024-06-01T00:00:00Z'
----
SELECT o.id FROM sales.orders FOR VERSION AS OF 1 AS o JOIN sales.orders FOR VERSION AS OF 2 AS p ON o.id = p.id
----
EXPLAIN SELECT * FROM t
----
EXPLAIN ANALYZE SELECT g, count(*) FROM t GROUP BY g
----
EXPLAIN INSERT INTO t SELECT * FROM u
----
SELECT
    l_orderkey,
    sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM
    customer,
    orders,
    lineitem
WHERE
    c_mktsegment = 'BUILDING'
    AND c_custkey = o_custkey
    AND l_orderkey = o_orderkey
    AND o_orderdate < CAST('1995-03-15' AS date)
GROUP BY
    l_orderkey
ORDER BY
    revenue DESC
LIMIT 10
----
SELECT a FROM t WHERE (a > 1 OR b < 2) AND (c = 3 OR (d = 4 AND e = 5))
----
SELECT a * (b + c) / (d - e) FROM t
----
SELECT a - (b - c), a / (b / c), (a - b) - c FROM t
----
SELECT -2 * 3, 2 * -3, - (SELECT 1) FROM t
----
SELECT "group", "order".x FROM "order"
----
SELECT a FROM t WHERE x LIKE 'a' || 'b'
----
SELECT (a = b) = (c = d) FROM t
----
SELECT a FROM t WHERE a IS NULL OR a NOT BETWEEN 1 AND 2 AND NOT b
----
SELECT CASE WHEN EXISTS (SELECT 1 FROM u) THEN (SELECT max(x) FROM u) END FROM t
----
SELECT 1 AS one, 'x' AS two ORDER BY one
----
SELECT version, timestamp, date, comment, status FROM events
----
SELECT a, b FROM t WHERE a IN (SELECT x FROM u UNION SELECT y FROM v)
----
SELECT * FROM t1 AS x JOIN t2 AS y ON x.k = y.k JOIN t3 z ON y.k = z.k JOIN t4 ON z.k = t4.k
----
SELECT coalesce(sum(x) FILTER (WHERE y), 0) / nullif(count(*), 0) AS ratio FROM t
----
SELECT median(x), quantile_cont(x, 0.9), mode(y) FROM t
----
SELECT 'grüße', 'データ', "straße" AS "列" FROM "café"
----
SELECT 1; -- a comment after the terminator
----
SELECT	a,	b	FROM	t	WHERE	a	>	1
----
SELECT count(*) OVER () AS total, sum(x) OVER (PARTITION BY g) FROM t
----
SELECT * FROM t ORDER BY lower(name) DESC, length(name), CASE WHEN a THEN 1 ELSE 2 END
----
SELECT a FROM t WHERE a IN (SELECT b FROM u) IS NOT TRUE
----
SELECT (a::int)[1], (l::int[])[2], l[1][2] FROM t
----
SELECT x BETWEEN 1 AND 2 + 3 * 4, x NOT BETWEEN 'a' || 'b' AND 'z' FROM t
----
SELECT count(ALL a), max(ALL a + 1), string_agg(ALL s, ',' ORDER BY s) FROM t
----
-- Floe's first catalog is named default, a reserved word: it may lead a qualified name bare.
SELECT n.n_name, default.tpch.nation.n_nationkey FROM default.tpch.nation AS n JOIN DEFAULT.tpch.region ON n_regionkey = r_regionkey
