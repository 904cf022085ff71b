/** View operations, one per module. */
export * from './common.js';
export * from './list.js';
export * from './create.js';
export * from './load.js';
export * from './exists.js';
export * from './replace.js';
export * from './drop.js';
