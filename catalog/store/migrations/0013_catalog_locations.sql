-- Where each catalog keeps its files, comparable across catalogs and tenants (docs/catalog.md
-- "Catalog locations"): no catalog's warehouse may equal, contain or lie inside another's, or the
-- credentials and signatures vended for one catalog's tables could reach another's files.
--
-- `warehouse_key` is the warehouse in the comparable form of catalog_entity_locations (migration
-- 0012: scheme made canonical, empty segments dropped, ending in '/'), so "lies under" is "starts
-- with" and the catalogs under a key are an index range. NULL: not taken yet (every catalog older
-- than this migration, or one stored by a replica without it); the checks take it from
-- warehouse_location first. '' for a warehouse with no comparable form (a `.` or `..` segment):
-- it matches no range, and no table of such a catalog is given credentials anyway.
ALTER TABLE catalogs ADD COLUMN warehouse_key text COLLATE "C";
CREATE INDEX catalogs_warehouse_key ON catalogs (warehouse_key);
CREATE INDEX catalogs_warehouse_key_missing ON catalogs (id) WHERE warehouse_key IS NULL;
