/** Catalog management operations (`/v1/catalogs`), one per module. */
export * from './common.js';
export * from './list.js';
export * from './load.js';
export * from './create.js';
export * from './drop.js';
export * from './bootstrap.js';
export * from './declare.js';
