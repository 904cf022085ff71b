/** Stages and bulk loading (docs/loading.md). */
export { StageService, stagesRoot, stageUrl } from './stages.js';
export type { FormatEntry, ResolvedStage, StageRecord, StageServiceOptions } from './stages.js';
export { StageFiles } from './stage-files.js';
export type { StagedFile } from './stage-files.js';
export { StageStatements } from './statements.js';
export { checkStageKey, parseStageRef, stageDisplay, stageKeyProblem, stagePattern, MAX_STAGE_KEY_BYTES } from './stage-path.js';
export type { StageRef } from './stage-path.js';
export { CopyRunner } from './copy-into.js';
export type { CopyRunnerOptions, FileOutcome, FileStatus, LoadError } from './copy-into.js';
export { resolveLoadFormat, readerSql, formatTypeOfName, compressionOfFile } from './load-format.js';
export type { LoadFormat, LoadFormatType, FormatOption, ReaderColumn, Compression } from './load-format.js';
export { StageUploads, ProfilePresigners, MAX_PARTS } from './uploads.js';
export type { UploadLimits, PresignAnswer } from './uploads.js';
export { UploadTokens } from './upload-tokens.js';
export type { UploadClaims, UploadOperation } from './upload-tokens.js';
