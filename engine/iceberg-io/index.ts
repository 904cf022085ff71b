/**
 * Iceberg data I/O for the engine: scans as DuckDB relations (read.ts) and writes of data and delete
 * files, manifests and snapshots (write.ts). See docs/engine-exec.md.
 */
export { duckdbType, icebergLiteral, localPath, localPathSql, parseNameMapping, projectedFields, quoteIdent, scanSql, sqlString, NO_COLUMN } from './read.js';
export type { ScanSqlOptions } from './read.js';
