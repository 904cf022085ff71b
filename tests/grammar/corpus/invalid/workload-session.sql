-- Invalid statements: Workload and session statements.
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:26 expected: 'interactive', 'medium' or 'batch'
SET svc.workload_class = 'turbo'
----
-- error 1:26 expected: 'interactive', 'medium' or 'batch'
SET svc.workload_class = 3
----
-- error 1:23 expected: "=" or TO
SET svc.workload_class
----
-- error 1:5 expected: an identifier
SET = 1
----
-- error 1:6 expected: ALL or an identifier
RESET
----
-- error 1:25 expected: an integer
SHOW QUERY HISTORY LIMIT
----
-- error 1:26 expected: an integer
SHOW QUERY HISTORY LIMIT 'ten'
----
-- error 1:26 expected: an integer
SHOW QUERY HISTORY LIMIT -1
----
-- error 1:11 expected: HISTORY
SHOW QUERY
----
-- error 1:15 expected: GROUPS
SHOW RESOURCE GROUP
----
-- error 1:14 expected: ACCOUNTS
SHOW SERVICE ACCOUNT
----
-- error 1:6 expected: QUERY, RESOURCE, USERS, SERVICE, PERSONAL, WEBHOOKS, CATALOGS, SCHEMAS, NAMESPACES, DATABASES, TABLES, VIEWS or STAGES
SHOW WEBHOOK
----
-- error 1:5 expected: QUERY, RESOURCE, USERS, SERVICE, PERSONAL, WEBHOOKS, CATALOGS, SCHEMAS, NAMESPACES, DATABASES, TABLES, VIEWS or STAGES
SHOW
----
-- error 1:6 expected: QUERY, RESOURCE, USERS, SERVICE, PERSONAL, WEBHOOKS, CATALOGS, SCHEMAS, NAMESPACES, DATABASES, TABLES, VIEWS or STAGES
SHOW FOO
