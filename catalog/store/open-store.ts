/** Opens the configured metadata store and brings its schema up to date. */
import { join } from 'node:path';
import type { MetaStore } from './meta-store.js';
import { migrate } from './migrate.js';
import { PgStore } from './pg-store.js';
import { PgliteStore } from './pglite-store.js';

export type StoreLocation =
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly poolSize?: number }
  | { readonly kind: 'pglite'; readonly dataDir: string }
  | { readonly kind: 'pglite-memory' };

export async function openStore(location: StoreLocation): Promise<MetaStore> {
  let store: MetaStore;
  switch (location.kind) {
    case 'postgres':
      store = new PgStore({ connectionString: location.connectionString, ...(location.poolSize ? { poolSize: location.poolSize } : {}) });
      break;
    case 'pglite':
      store = await PgliteStore.open({ dataDir: join(location.dataDir, 'pglite') });
      break;
    case 'pglite-memory':
      store = await PgliteStore.open({});
      break;
  }
  try {
    await migrate(store);
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }
  return store;
}
