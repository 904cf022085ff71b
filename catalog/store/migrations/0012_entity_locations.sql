-- Where each table and view keeps its files (docs/catalog.md "Table locations"): its location and,
-- for a table, the location properties (write.data.path, write.metadata.path, …), one row each, so
-- that a create or commit can refuse a location overlapping another entity's with one indexed query.
--
-- `location` is the comparable form: scheme made canonical (s3a, s3n → s3), empty segments dropped,
-- and always ending in '/', so that "A lies under B" is "A starts with B" and the entries under B
-- are the range [B, B with its final '/' replaced by '0'). `display` is the location as written,
-- for error messages. Rows of a dropped entity go with it (ON DELETE CASCADE).
CREATE TABLE catalog_entity_locations (
  tenant_id   text NOT NULL REFERENCES tenants(id),
  catalog_id  uuid NOT NULL,
  entity_id   uuid NOT NULL REFERENCES catalog_entities(id) ON DELETE CASCADE,
  location    text COLLATE "C" NOT NULL,
  display     text NOT NULL,
  PRIMARY KEY (entity_id, location)
);
CREATE INDEX catalog_entity_locations_prefix ON catalog_entity_locations (catalog_id, location);

-- The metadata file the entity's rows above were taken from. Rows are current while it equals
-- metadata_location; NULL (every entity older than this migration) or another file means they must
-- be taken again from the metadata file before a check relies on them (docs/catalog.md).
ALTER TABLE catalog_entities ADD COLUMN locations_of text;
CREATE INDEX catalog_entities_locations_stale ON catalog_entities (catalog_id) WHERE locations_of IS DISTINCT FROM metadata_location;
