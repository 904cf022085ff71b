-- Invalid statements: Lexical errors: the lexer reports them before the grammar runs.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:8 expected: a closing quote (')
SELECT 'unterminated
----
-- error 1:8 expected: a closing double quote (")
SELECT "unterminated FROM t
----
-- error 1:10 expected: "*/"
SELECT 1 /* never closed
----
-- error 1:8 expected: an identifier
SELECT "" FROM t
----
-- error 1:8 expected: a valid token
SELECT # FROM t
----
-- error 1:27 expected: a valid token
SELECT a FROM t WHERE b = ?
----
-- error 1:8 expected: a valid token
SELECT $a
----
-- error 1:18 expected: a stage name after "@"
COPY INTO t FROM @
