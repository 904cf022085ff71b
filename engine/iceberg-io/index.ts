/**
 * Iceberg data I/O for the engine: scans as DuckDB relations (read.ts) and writes of data and delete
 * files, manifests and snapshots (write.ts). See docs/engine-exec.md.
 */
export { duckdbType, icebergLiteral, localPath, localPathSql, parseNameMapping, projectedFields, quoteIdent, scanSql, sqlString, NO_COLUMN, POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID } from './read.js';
export type { ScanSqlOptions } from './read.js';
export { transformSql } from './partition-sql.js';
export {
  appendSnapshot, appendWriteRequest, commitChange, commitUpdates, dataFilesFromWritten, dataLocationOf, deleteFilesFromWritten, fieldIdsSpec, isMergeOnRead, newSnapshotId,
  partitionValueFromWire, positionDeleteWriteRequest, snapshotSummary, stageAppend, stageOverwrite, stageRowDelta, statValue,
} from './write.js';
export type { CommitPort, SnapshotCommit, SnapshotOptions, StagedChange, SummaryDelta, WriteRequestOptions } from './write.js';
export { importFormatOf, importSourceSql } from './import.js';
export type { ImportFormat } from './import.js';
