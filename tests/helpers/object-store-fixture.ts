/**
 * One shape for the object stores the store-backed suites run on (RGW for S3, Azurite for ADLS, the
 * GCS checking server for GCS), so
 * a suite body is written once and each store's entry file hands it its fixture
 * (tests/storage/*.suite.ts). What differs between stores lives here: how a catalog reaches a
 * container, how its objects are listed, what its throttling answer is, and how it is stopped.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { ParsedStorageProfile } from '../../catalog/rest/operations/catalogs/common.js';
import { AZURITE_DFS_SUFFIX, azuriteCatalogStorage, azuriteStorageProfile, type AzuriteStore } from './azurite.js';
import { gcsStorageProfile, type GcsCheckingServer } from './gcs-checking-server.js';
import type { RgwStore } from './rgw.js';

export interface ObjectStoreFixture {
  /** The store's own words, for assertion messages: `bucket` or `container`, `file` or `blob`, `gateway` or `emulator`. */
  readonly nouns: { readonly container: string; readonly object: string; readonly server: string };
  /** Where the store listens (a fault proxy forwards there). */
  readonly endpoint: string;
  /** The secret the catalog holds; no response or error may contain it. */
  readonly secret: { readonly value: string; readonly name: string };
  /** The store's throttling answer (S3 `SlowDown`, Azure `ServerBusy`, GCS `rateLimitExceeded`). */
  readonly throttle: { readonly status: number; readonly code: string };
  createContainer(name: string): Promise<void>;
  /** The warehouse location of `keyPrefix` in `container`, as Floe's locations spell it (no trailing `/`). */
  warehouseLocation(container: string, keyPrefix: string): string;
  /** `{warehouseLocation, storage}` for `floe.state.catalog.createCatalog`. */
  catalogStorage(container: string, keyPrefix: string): { readonly warehouseLocation: string; readonly storage: ParsedStorageProfile };
  /** The `storage-profile` of `POST /v1/catalogs`, reaching the store through `proxy` (an `http://host:port` origin) when given. */
  storageProfile(container: string, keyPrefix: string, proxy?: string): Record<string, unknown>;
  /** Names of the objects in `container` under `prefix`. */
  listKeys(container: string, prefix: string): Promise<readonly string[]>;
  /** Stops the store's server (an unreachable store); the fixture's owner still cleans up. */
  stopServer(): Promise<void>;
}

/** A Ceph RGW as an S3 store, reached path-style with the user's keys. */
export function rgwFixture(rgw: RgwStore): ObjectStoreFixture {
  const warehouseLocation = (bucket: string, keyPrefix: string): string => `s3://${bucket}${keyPrefix === '' ? '' : `/${keyPrefix}`}`;
  return {
    nouns: { container: 'bucket', object: 'file', server: 'gateway' },
    endpoint: rgw.endpoint,
    secret: { value: rgw.secretAccessKey, name: 'secret' },
    throttle: { status: 503, code: 'SlowDown' },
    createContainer: (name) => rgw.createBucket(name),
    warehouseLocation,
    catalogStorage: (bucket, keyPrefix) => ({
      warehouseLocation: warehouseLocation(bucket, keyPrefix),
      storage: {
        profile: { type: 's3', bucket, keyPrefix, region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
        secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      },
    }),
    storageProfile: (bucket, keyPrefix, proxy) => ({
      type: 's3', bucket, ...(keyPrefix === '' ? {} : { 'key-prefix': keyPrefix }), region: rgw.region, endpoint: proxy ?? rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    }),
    async listKeys(bucket, prefix) {
      const s3 = rgw.client();
      try {
        return ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key ?? '');
      } finally {
        s3.destroy();
      }
    },
    stopServer: () => rgw.stopGateway(),
  };
}

/** Azurite as an ADLS store (flat namespace), reached with the account's Shared Key. */
export function azuriteFixture(azurite: AzuriteStore): ObjectStoreFixture {
  return {
    nouns: { container: 'container', object: 'blob', server: 'emulator' },
    endpoint: azurite.endpoint,
    secret: { value: azurite.accountKey, name: 'key' },
    throttle: { status: 503, code: 'ServerBusy' },
    createContainer: (name) => azurite.createContainer(name),
    warehouseLocation: (container, keyPrefix) => `abfss://${container}@${azurite.accountName}.${AZURITE_DFS_SUFFIX}${keyPrefix === '' ? '' : `/${keyPrefix}`}`,
    catalogStorage: (container, keyPrefix) => azuriteCatalogStorage(azurite, container, keyPrefix),
    // Azurite addresses the account by path; Shared Key signs no host, so requests signed for a
    // proxy verify at Azurite.
    storageProfile: (container, keyPrefix, proxy) => azuriteStorageProfile(azurite, container, keyPrefix, proxy === undefined ? {} : { endpoint: `${proxy}/${azurite.accountName}` }),
    async listKeys(container, prefix) {
      const keys: string[] = [];
      for await (const b of azurite.client().getContainerClient(container).listBlobsFlat({ prefix })) keys.push(b.name);
      return keys;
    },
    stopServer: () => azurite.stopServer(),
  };
}

/**
 * The GCS checking server (tests/helpers/gcs-checking-server.ts) as a GCS store, reached with its
 * service-account key; it checks every request's token and answers as the JSON and XML APIs do.
 */
export function gcsFixture(gcs: GcsCheckingServer): ObjectStoreFixture {
  const warehouseLocation = (bucket: string, keyPrefix: string): string => `gs://${bucket}${keyPrefix === '' ? '' : `/${keyPrefix}`}`;
  return {
    nouns: { container: 'bucket', object: 'object', server: 'server' },
    endpoint: gcs.endpoint,
    secret: { value: gcs.serviceAccountKey.private_key, name: 'key' },
    throttle: { status: 429, code: 'rateLimitExceeded' },
    createContainer: async (name) => gcs.createBucket(name),
    warehouseLocation,
    catalogStorage: (bucket, keyPrefix) => ({
      warehouseLocation: warehouseLocation(bucket, keyPrefix),
      storage: {
        profile: { type: 'gcs', bucket, keyPrefix, projectId: gcs.projectId, endpoint: gcs.endpoint, credentialSource: 'service-account-key' },
        secret: { type: 'gcs-service-account-key', key: JSON.stringify(gcs.serviceAccountKey) },
      },
    }),
    storageProfile: (bucket, keyPrefix, proxy) => gcsStorageProfile(gcs, bucket, keyPrefix, proxy === undefined ? {} : { endpoint: proxy }),
    listKeys: async (bucket, prefix) => gcs.objectNames(bucket).filter((name) => name.startsWith(prefix)),
    stopServer: () => gcs.close(),
  };
}
