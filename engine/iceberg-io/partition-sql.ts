/**
 * Iceberg partition transforms as DuckDB SQL over a column, for writes (every transform but `bucket`,
 * whose murmur3 the writer computes with the catalog's own transform). Results follow the spec's
 * types: `year`/`month`/`hour` ints since 1970 with floor semantics before it, `day` days since 1970,
 * `truncate` on the unscaled value. Tested against `applyTransform`.
 */
import { unreachable } from '../../catalog/iceberg/errors.js';
import type { Transform } from '../../catalog/iceberg/transforms.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { floeError } from '../../grammar/errors.js';
import { quoteIdent } from './read.js';

/** The SQL of a partition transform over a column (all but bucket, which joins a computed mapping). */
export function transformSql(column: string, transform: Transform, source: PrimitiveType): string {
  const raw = quoteIdent(column);
  // TIMESTAMPTZ calendar functions need ICU, which the workers do not load: compute on the UTC
  // wall-clock TIMESTAMP of the same instant instead.
  const c = (transform.kind === 'year' || transform.kind === 'month') && (source.kind === 'timestamptz' || source.kind === 'timestamptz_ns') ? `make_timestamp(epoch_us(${raw}))` : raw;
  switch (transform.kind) {
    case 'identity':
      return c;
    case 'void':
      return 'NULL::INTEGER';
    case 'truncate': {
      const w = transform.width;
      if (source.kind === 'int' || source.kind === 'long') return `(${c} - (((${c} % ${w}) + ${w}) % ${w}))`;
      if (source.kind === 'string') return `substring(${c}, 1, ${w})`;
      if (source.kind === 'decimal') {
        const scale = 10n ** BigInt(source.scale);
        const unscaled = `CAST(${c} * ${scale} AS HUGEINT)`;
        return `CAST((${unscaled} - (((${unscaled} % ${w}) + ${w}) % ${w})) / ${scale}::DECIMAL(38,${source.scale}) AS DECIMAL(${source.precision},${source.scale}))`;
      }
      throw floeError('UNSUPPORTED_STATEMENT', { what: `truncate partitioning on ${source.kind}` });
    }
    case 'year':
      return `CAST(year(${c}) - 1970 AS INTEGER)`;
    case 'month':
      return `CAST((year(${c}) - 1970) * 12 + month(${c}) - 1 AS INTEGER)`;
    case 'day':
      return source.kind === 'date' ? `CAST(${c} - DATE '1970-01-01' AS INTEGER)` : `CAST(floor(epoch_us(${c}) / 86400000000.0) AS INTEGER)`;
    case 'hour':
      return `CAST(floor(epoch_us(${c}) / 3600000000.0) AS INTEGER)`;
    case 'bucket':
    case 'unknown':
      throw floeError('UNSUPPORTED_STATEMENT', { what: `partition transform ${transform.kind} in SQL` });
    default:
      return unreachable(transform);
  }
}

