-- Reserved for the Iceberg REST catalog (catalogs, namespaces, tables, views, idempotency keys); filled in by the work on that context.
SELECT 1;
