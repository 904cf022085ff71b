/**
 * What the catalog's credential routes need of a store's vendor (server/routes/iceberg/credentials.ts
 * keeps one per catalog): entries for a table's locations, which failures are the store's, and how to
 * let go. Each store's vendor lives in its own file (`s3-vending.ts`, `adls-vending.ts`,
 * `gcs-vending.ts`) and says there how it mints and what its entries hold.
 */
import type { AccessMode } from './s3-vending.js';
import type { StorageProfile } from './storage-profile.js';

/** One `storage-credentials` entry: a location prefix (ending in `/`) and the client config for it. */
export interface VendedEntry {
  readonly prefix: string;
  readonly config: ReadonlyMap<string, string>;
}

/** A catalog's credential vendor; `store` is its profile's `type`. */
export interface TableCredentialVendor {
  readonly store: StorageProfile['type'];
  /**
   * Entries covering `locations` (the table's, already checked to lie inside the warehouse and to
   * hold no other table, namespace folder or the warehouse itself: credentials.ts) in `mode`;
   * `refreshEndpoint` goes into each entry's config so clients can ask again.
   */
  vend(locations: readonly string[], mode: AccessMode, refreshEndpoint: string): Promise<readonly VendedEntry[]>;
  /** Whether `e` is the store refusing or failing to mint (the client gets a 503), not a bug. */
  isVendingFailure(e: unknown): e is Error;
  /** Releases what the vendor holds open (the S3 STS client); the vendor is not used after. */
  close(): void;
}

/** Entries for a vendor whose one credential covers all of a table's locations (S3, GCS). */
export function entriesSharing(locations: readonly string[], config: ReadonlyMap<string, string>): readonly VendedEntry[] {
  return locations.map((location) => ({ prefix: `${location}/`, config }));
}

/** What every vendor takes from the server. */
export interface TableVendorOptions {
  /** The server's clock (tests move it). */
  readonly now: () => number;
  /** Server setting `storage.vending.cache_sessions`: off, every vend mints (S3 and GCS). */
  readonly cacheSessions: boolean;
}
