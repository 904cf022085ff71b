/** Table operations, one per module; the commit protocol is `commit.ts`. */
export * from './common.js';
export * from './list.js';
export * from './create.js';
export * from './load.js';
export * from './exists.js';
export * from './drop.js';
export * from './register.js';
export * from './metrics.js';
export * from './commit.js';
