-- Workload and session statements, and the principal SHOW/DESCRIBE forms used by operators.
SET svc.workload_class = 'interactive'
----
SET svc.workload_class = 'medium'
----
SET svc.workload_class = 'batch'
----
SET svc.workload_class TO 'BATCH'
----
SET SESSION svc.workload_class = 'interactive'
----
set svc.workload_class = 'medium';
----
SET svc.workload_class = DEFAULT
----
SET timezone = 'UTC'
----
SET search_path = 'lake.sales'
----
SET SESSION query_timeout_ms = 30000
----
SET threads TO 4
----
SET enable_profiling = TRUE
----
SET svc.max_rows = -1
----
SET statement_timeout = DEFAULT
----
SET schema = sales
----
RESET svc.workload_class
----
RESET timezone
----
RESET ALL
----
SHOW QUERY HISTORY
----
SHOW QUERY HISTORY LIMIT 10
----
SHOW QUERY HISTORY LIMIT = 500
----
SHOW QUERY HISTORY LIMIT=1;
----
SHOW RESOURCE GROUPS
----
show resource groups
----
SHOW USERS
----
SHOW SERVICE ACCOUNTS
----
SHOW PERSONAL ACCESS TOKENS FOR "Grace.Hopper"
----
SHOW WEBHOOKS
----
DESCRIBE USER bob
