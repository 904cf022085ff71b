-- Invalid statements: stages and COPY INTO options.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:6 expected: a stage reference
LIST raw
----
-- error 1:8 expected: a stage reference
REMOVE 'x'
----
-- error 1:14 expected: an identifier
CREATE STAGE @s
----
-- error 1:35 expected: another clause
CREATE STAGE s URL = 'file:///a/' URL = 'file:///b/'
----
-- error 1:32 expected: ABORT_STATEMENT or CONTINUE or SKIP_FILE
COPY INTO t FROM @s ON_ERROR = SKIP_FILE_3
----
-- error 1:29 expected: TRUE or FALSE
COPY INTO t FROM @s PURGE = 1
----
-- error 1:34 expected: another clause
COPY INTO t FROM @s FORCE = TRUE FORCE = FALSE
----
-- error 1:29 expected: "("
COPY INTO t FROM @s FILES = 'a.csv'
----
-- error 1:16 expected: STAGE
GRANT USAGE ON s TO USER u
----
-- error 1:38 expected: a stage reference
COPY INTO t FROM (SELECT $1, $2 FROM raw)
----
-- error 1:54 expected: another parameter
COPY INTO t FROM (SELECT $1 FROM @s (PATTERN => 'a', PATTERN => 'b'))
----
-- error 1:31 expected: the end of the column reference
COPY INTO t FROM (SELECT f.$1(x) FROM @s f)
