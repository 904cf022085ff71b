/**
 * Stage references and keys, as pure functions. A reference is the text after `@`: `name[/path]`
 * (a named stage of the session's catalog) or `~[/path]` (the user's own stage). A key is a path
 * relative to a stage's folder; every key that reaches storage has passed `checkStageKey`, so no
 * statement or endpoint can name a file outside its stage.
 */
import { floeError } from '../../grammar/errors.js';

/** Where a reference points. `path` is '' for the stage's root, else a checked relative key. */
export type StageRef =
  | { readonly kind: 'user'; readonly path: string }
  | { readonly kind: 'named'; readonly name: string; readonly path: string };

/** Longest key accepted (S3's own limit is 1,024 bytes). */
export const MAX_STAGE_KEY_BYTES = 1024;

/** Why a key is refused, or undefined when it is acceptable. */
export function stageKeyProblem(key: string, options: { readonly allowEmpty?: boolean; readonly allowFolder?: boolean } = {}): string | undefined {
  if (key === '') return options.allowEmpty === true ? undefined : 'the path is empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_STAGE_KEY_BYTES) return `the path is longer than ${MAX_STAGE_KEY_BYTES} bytes`;
  if (key.startsWith('/') || key.startsWith('~')) return 'the path must be relative to the stage (no leading / or ~)';
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(key)) return 'the path must be relative to the stage (no scheme)';
  // Control characters (NUL, newlines) and backslashes: no file system or object store agrees on them.
  if (/[\u0000-\u001f\u007f\\]/.test(key)) return 'the path contains a control character or a backslash';
  // An encoded slash, backslash or dot would turn into a separator or `..` once someone decodes it.
  if (/%(2f|5c|2e|00)/i.test(key)) return 'the path contains an encoded slash, backslash, dot or NUL';
  const segments = key.split('/');
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const s = segments[i]!;
    if (s === '.' || s === '..') return 'the path contains a . or .. segment';
    if (s === '' && !(i === last && options.allowFolder === true)) return 'the path contains an empty segment (//)';
  }
  return undefined;
}

/** Throws INVALID_PARAMETER when `key` could leave its stage. */
export function checkStageKey(key: string, options: { readonly allowEmpty?: boolean; readonly allowFolder?: boolean } = {}, what = 'stage path'): string {
  const problem = stageKeyProblem(key, options);
  if (problem !== undefined) throw floeError('INVALID_PARAMETER', { name: what, detail: problem });
  return key;
}

/** Parses the text after `@` (`s`, `s/a/b.csv`, `~`, `~/dir/`). */
export function parseStageRef(text: string): StageRef {
  const slash = text.indexOf('/');
  const head = slash < 0 ? text : text.slice(0, slash);
  const path = slash < 0 ? '' : text.slice(slash + 1);
  checkStageKey(path, { allowEmpty: true, allowFolder: true });
  if (head === '~') return { kind: 'user', path };
  if (head.startsWith('%')) throw floeError('UNSUPPORTED_STATEMENT', { what: `table stages (@${head}); use a named stage or @~` });
  if (!/^[A-Za-z_][A-Za-z0-9_$]*$/.test(head)) throw floeError('INVALID_PARAMETER', { name: 'stage', detail: `@${head} is not a stage name (a name, or ~ for your own stage)` });
  // Unquoted identifiers are case-insensitive: stage names are stored as written by CREATE STAGE, lower-cased when unquoted.
  return { kind: 'named', name: head.toLowerCase(), path };
}

/** The display form of a file of a stage: `@name/path` or `@~/path`. */
export function stageDisplay(ref: { readonly kind: 'user' } | { readonly kind: 'named'; readonly name: string }, key: string): string {
  return `@${ref.kind === 'user' ? '~' : ref.name}${key === '' ? '' : `/${key}`}`;
}

/**
 * A stage PATTERN: a regular expression matched against the whole key (Snowflake's rule), so
 * `.*[.]csv` means "ends in .csv". Bad syntax is INVALID_PARAMETER, not a 500.
 */
export function stagePattern(pattern: string | undefined): ((key: string) => boolean) | undefined {
  if (pattern === undefined) return undefined;
  if (pattern.length > 1000) throw floeError('INVALID_PARAMETER', { name: 'PATTERN', detail: 'longer than 1000 characters' });
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${pattern})$`, 'u');
  } catch (e) {
    throw floeError('INVALID_PARAMETER', { name: 'PATTERN', detail: `not a regular expression: ${(e as Error).message}` });
  }
  return (key) => re.test(key);
}
