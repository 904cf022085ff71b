/**
 * The functions user SQL may call: an allowlist, not a blocklist, so a DuckDB function added in a
 * later release (or an extension's) is refused until someone reads it and adds it here. Every name
 * below is pure computation over its arguments: none reads or writes files, opens the network,
 * loads extensions, reads or changes settings, or reveals the engine's catalog or environment.
 * Refused on purpose (examples): read_csv, read_parquet, read_json, read_text, read_blob, glob,
 * parquet_scan, parquet_metadata, iceberg_scan, sniff_csv, query, query_table, getenv,
 * current_setting, getvariable, setseed, duckdb_* metadata functions, pragma_*, load_extension,
 * version, current_database, current_schema(s), nextval (sequences are engine state). See
 * docs/planner.md for the policy.
 */
import { AGGREGATE_FUNCTIONS } from '../../grammar/index.js';

/** Scalar functions (lower-case names, DuckDB spelling and common aliases). */
const SCALAR_FUNCTIONS: readonly string[] = [
  // conditional and comparison
  'coalesce', 'nullif', 'ifnull', 'if', 'iif', 'greatest', 'least', 'nvl', 'isnan', 'isinf', 'isfinite',
  // numeric
  'abs', 'ceil', 'ceiling', 'floor', 'round', 'round_even', 'roundbankers', 'trunc', 'sign', 'sqrt', 'cbrt',
  'pow', 'power', 'exp', 'ln', 'log', 'log2', 'log10', 'mod', 'pi', 'degrees', 'radians', 'sin', 'cos', 'tan',
  'asin', 'acos', 'atan', 'atan2', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh', 'cot', 'factorial',
  'gcd', 'lcm', 'even', 'gamma', 'lgamma', 'random', 'bit_count', 'xor', 'divide', 'fdiv', 'fmod',
  'add', 'subtract', 'multiply', 'nextafter', 'signbit',
  // strings
  'length', 'char_length', 'character_length', 'octet_length', 'bit_length', 'strlen', 'lower', 'upper', 'lcase',
  'ucase', 'concat', 'concat_ws', 'substr', 'substring', 'substring_grapheme', 'left', 'right', 'left_grapheme',
  'right_grapheme', 'trim', 'ltrim', 'rtrim', 'lpad', 'rpad', 'replace', 'reverse', 'repeat', 'position', 'strpos',
  'instr', 'starts_with', 'ends_with', 'prefix', 'suffix', 'contains', 'split_part', 'string_split', 'str_split',
  'string_split_regex', 'str_split_regex', 'string_to_array', 'regexp_matches', 'regexp_replace', 'regexp_extract',
  'regexp_extract_all', 'regexp_full_match', 'regexp_split_to_array', 'regexp_split_to_table', 'like_escape',
  'ilike_escape', 'translate', 'ascii', 'chr', 'unicode', 'ord', 'format', 'printf', 'initcap', 'md5', 'md5_number',
  'sha1', 'sha256', 'hash', 'base64', 'to_base64', 'from_base64', 'encode', 'decode', 'hex', 'unhex', 'to_hex',
  'from_hex', 'bin', 'to_binary', 'from_binary', 'levenshtein', 'damerau_levenshtein', 'hamming', 'mismatches',
  'jaccard', 'jaro_similarity', 'jaro_winkler_similarity', 'editdist3', 'strip_accents', 'nfc_normalize',
  'url_encode', 'url_decode', 'array_to_string', 'list_aggr', 'formatreadablesize', 'format_bytes',
  'formatreadabledecimalsize', 'bar', 'glob_match',
  // dates and times
  'date_part', 'datepart', 'date_trunc', 'datetrunc', 'date_diff', 'datediff', 'date_sub', 'datesub', 'date_add',
  'extract', 'year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'microsecond', 'week', 'weekday',
  'weekofyear', 'dayofweek', 'dayofmonth', 'dayofyear', 'isodow', 'isoyear', 'yearweek', 'quarter', 'decade',
  'century', 'millennium', 'era', 'epoch', 'epoch_ms', 'epoch_us', 'epoch_ns', 'make_date', 'make_time',
  'make_timestamp', 'make_timestamptz', 'to_timestamp', 'to_days', 'to_hours', 'to_minutes', 'to_seconds',
  'to_milliseconds', 'to_microseconds', 'to_years', 'to_months', 'to_weeks', 'to_centuries', 'to_decades',
  'to_millennia', 'strftime', 'strptime', 'try_strptime', 'last_day', 'monthname', 'dayname', 'age', 'time_bucket',
  'now', 'today', 'current_date', 'current_time', 'current_timestamp', 'get_current_time', 'get_current_timestamp',
  'transaction_timestamp', 'localtime', 'localtimestamp', 'timezone', 'date_part_epoch', 'julian', 'infinity',
  // lists, structs, maps
  'list_value', 'list_pack', 'array_value', 'list_extract', 'list_element', 'array_extract', 'list_contains',
  'list_has', 'array_contains', 'array_has', 'list_position', 'list_indexof', 'array_position', 'array_indexof',
  'list_concat', 'list_cat', 'array_concat', 'array_cat', 'list_append', 'array_append', 'array_push_back',
  'list_prepend', 'array_prepend', 'array_push_front', 'list_slice', 'array_slice', 'list_sort', 'array_sort',
  'list_reverse_sort', 'array_reverse_sort', 'list_distinct', 'array_distinct', 'list_unique', 'array_unique',
  'list_has_any', 'array_has_any', 'list_has_all', 'array_has_all', 'list_intersect', 'array_intersect', 'len',
  'array_length', 'list_reverse', 'array_reverse', 'list_resize', 'array_resize', 'flatten', 'list_zip', 'array_zip',
  'list_sum', 'list_min', 'list_max', 'list_avg', 'list_count', 'list_first', 'list_last', 'list_any_value',
  'list_string_agg', 'list_bool_and', 'list_bool_or', 'list_median', 'list_mode', 'list_product', 'list_select',
  'list_where', 'list_grade_up', 'array_grade_up', 'generate_series', 'range', 'repeat_row', 'unnest',
  'struct_pack', 'struct_extract', 'struct_insert', 'row', 'map', 'map_extract', 'element_at', 'map_keys',
  'map_values', 'map_entries', 'map_from_entries', 'map_concat', 'map_contains', 'cardinality', 'array_dims',
  'list_dot_product', 'list_inner_product', 'list_cosine_similarity', 'list_distance', 'array_cross_product',
  // json (pure parsing of values)
  'json_extract', 'json_extract_string', 'json_extract_path', 'json_extract_path_text', 'json_exists', 'json_value',
  'json_type', 'json_valid', 'json_array_length', 'json_keys', 'json_object', 'json_array', 'json_quote',
  'json_merge_patch', 'json_structure', 'json_contains', 'to_json', 'json', 'json_transform', 'from_json',
  'json_transform_strict', 'from_json_strict', 'json_serialize_sql', 'array_to_json', 'row_to_json',
  // casting, types, misc
  'typeof', 'try_cast', 'cast', 'uuid', 'gen_random_uuid', 'uuidv4', 'uuid_extract_version', 'uuid_extract_timestamp',
  'constant_or_null', 'alias', 'stats', 'grouping', 'grouping_id', 'error',
  // window functions
  'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value',
  'last_value', 'nth_value', 'rank_dense',
];

/** Table functions allowed in FROM: generators only. */
const TABLE_FUNCTIONS: readonly string[] = ['range', 'generate_series', 'unnest'];

/** Every scalar, aggregate and window function user SQL may call (lower-case). */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([...SCALAR_FUNCTIONS, ...AGGREGATE_FUNCTIONS]);

/** Table functions user SQL may use in FROM (lower-case). */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(TABLE_FUNCTIONS);
