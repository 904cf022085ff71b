-- Storage profiles (issue 17, docs/storage.md): how Floe reaches a catalog's warehouse on object
-- storage. The profile proper (type, bucket, key prefix, region, endpoint, addressing, credential
-- source) is JSON that clients may read back; the keys are sealed under the server key
-- (AES-256-GCM, bound to the catalog id, as webhook secrets are) and never returned.
-- NULL for both: the warehouse is on the deployment's local storage, as before.
ALTER TABLE catalogs ADD COLUMN storage_profile jsonb;
ALTER TABLE catalogs ADD COLUMN storage_secret_sealed text;
