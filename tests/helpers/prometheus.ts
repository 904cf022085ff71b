/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line
 * must be a comment, a HELP/TYPE line or a sample with a valid name, labels and value, and every
 * sample must belong to a declared metric family.
 */
export interface Sample {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created'];

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // plain comment
      if (!NAME.test(m[2]!)) throw new Error(`bad metric name, ${where}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3]!)) throw new Error(`bad type, ${where}`);
        if (types.has(m[2]!)) throw new Error(`type declared twice, ${where}`);
        types.set(m[2]!, m[3]!);
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`bad sample, ${where}`);
    const labels = parseLabels(m[3] ?? '', where);
    const value = parseValue(m[4]!);
    if (value === undefined) throw new Error(`bad value, ${where}`);
    const family = familyOf(m[1]!, types);
    if (!family) throw new Error(`sample of an undeclared metric, ${where}`);
    samples.push({ name: m[1]!, labels, value });
  });
  return { types, samples };
}

/** Values as Prometheus reads them (Go's ParseFloat): NaN and Inf in any letter case. */
function parseValue(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower === 'nan') return NaN;
  if (/^[+]?inf(inity)?$/.test(lower)) return Infinity;
  if (/^-inf(inity)?$/.test(lower)) return -Infinity;
  const n = Number(text);
  return text.trim() === '' || Number.isNaN(n) ? undefined : n;
}

function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of SUFFIXES) if (name.endsWith(suffix) && types.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  return undefined;
}

function parseLabels(text: string, where: string): Map<string, string> {
  const labels = new Map<string, string>();
  let rest = text;
  while (rest.length > 0) {
    const m = /^([^=]+)="((?:[^"\\]|\\["\\n])*)"(,|$)/.exec(rest);
    if (!m || !LABEL_NAME.test(m[1]!)) throw new Error(`bad labels, ${where}`);
    if (labels.has(m[1]!)) throw new Error(`label repeated, ${where}`);
    labels.set(m[1]!, m[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1'));
    rest = rest.slice(m[0].length);
  }
  return labels;
}
