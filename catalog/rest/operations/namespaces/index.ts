/** Namespace operations, one per module. */
export * from './list.js';
export * from './create.js';
export * from './load.js';
export * from './exists.js';
export * from './drop.js';
export * from './update-properties.js';
