/**
 * Public surface of the grammar context: SQL text in, Statement IR (or SYNTAX_ERROR) out; IR back
 * to DuckDB SQL; redaction; what the planner reads from a statement. See README.md.
 */
import { Parser, createParser, DEFAULT_MAX_STATEMENT_LENGTH } from './parser.js';
import { setDefaultParserFactory } from './redact.js';

setDefaultParserFactory(() => new Parser({ cacheSize: 0 }));

export { Parser, createParser, DEFAULT_MAX_STATEMENT_LENGTH };
export type { ParseResult, ParseSuccess, ParseFailure, ParserOptions, CacheStats } from './parser.js';
export { unparseQuery, unparseFrom, unparseExpr, toSql, typeSql, quoteIdent, identSql, stringSql } from './unparse.js';
export type { UnparseOptions } from './unparse.js';
export { redact, redactTokens, REDACTED } from './redact.js';
export { queryType, planFeatures } from './analysis.js';
export type { QueryType, PlanFeatures } from './analysis.js';
export { printIR } from './print.js';
export { lex, lineColumn } from './lexer.js';
export { AGGREGATE_FUNCTIONS, isAggregateCall } from './semantics.js';
export * from './ir.js';
export { FloeError, floeError, isFloeError, ERRORS } from './errors.js';
export type { ErrorCode, ErrorDefinition } from './errors.js';
