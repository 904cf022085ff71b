/**
 * Sort orders: how writers should sort rows within data files. Order id 0 is always "unsorted".
 */
import { badRequest, validationError } from './errors.js';
import { asArray, asObject, field, optionalInt, requiredInt, requiredString } from './json-fields.js';
import type { JsonValue } from './json.js';
import { indexSchema } from './schema.js';
import type { Schema } from './schema.js';
import { parseTransform, transformResultType, transformToString, transformsEqual } from './transforms.js';
import type { Transform } from './transforms.js';
import { isPrimitive } from './types.js';

export type SortDirection = 'asc' | 'desc';
export type NullOrder = 'nulls-first' | 'nulls-last';

export interface SortField {
  readonly sourceId: number;
  readonly transform: Transform;
  readonly direction: SortDirection;
  readonly nullOrder: NullOrder;
}

export interface SortOrder {
  readonly orderId: number;
  readonly fields: readonly SortField[];
}

/** The reserved unsorted order. */
export const UNSORTED_ORDER: SortOrder = { orderId: 0, fields: [] };
export const UNSORTED_ORDER_ID = 0;

/** Reads a `SortOrder`; `order-id` (read-only in requests) defaults to `defaultOrderId`. */
export function sortOrderFromJson(json: JsonValue | undefined, defaultOrderId = 0): SortOrder {
  const obj = asObject(json, 'sort order');
  return {
    orderId: optionalInt(obj, 'order-id', 'sort order') ?? defaultOrderId,
    fields: asArray(field(obj, 'fields'), 'sort fields').map((f) => {
      const o = asObject(f, 'sort field');
      const direction = requiredString(o, 'direction', 'sort field').toLowerCase();
      const nullOrder = requiredString(o, 'null-order', 'sort field').toLowerCase();
      if (direction !== 'asc' && direction !== 'desc') throw badRequest(`Invalid sort direction: ${direction}`);
      if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') throw badRequest(`Invalid null order: ${nullOrder}`);
      return {
        sourceId: requiredInt(o, 'source-id', 'sort field'),
        transform: parseTransform(requiredString(o, 'transform', 'sort field')),
        direction,
        nullOrder,
      };
    }),
  };
}

/** Writes a sort order in Java's key order. */
export function sortOrderToJson(order: SortOrder): JsonValue {
  return {
    'order-id': order.orderId,
    fields: order.fields.map((f) => ({ transform: transformToString(f.transform), 'source-id': f.sourceId, direction: f.direction, 'null-order': f.nullOrder })),
  };
}

/** Same fields in the same order (ids ignored), Java `SortOrder.sameOrder`. */
export function sameSortOrder(a: SortOrder, b: SortOrder): boolean {
  return a.fields.length === b.fields.length && a.fields.every((f, i) => {
    const g = b.fields[i];
    return g !== undefined && f.sourceId === g.sourceId && f.direction === g.direction && f.nullOrder === g.nullOrder && transformsEqual(f.transform, g.transform);
  });
}

/** Checks that sort fields refer to primitive columns of `schema` and that transforms apply. */
export function validateSortOrder(order: SortOrder, schema: Schema): void {
  const index = indexSchema(schema);
  for (const f of order.fields) {
    const source = index.byId.get(f.sourceId);
    if (source === undefined) throw validationError(`Cannot find source column for sort field: ${f.sourceId}`);
    if (!isPrimitive(source.field.type)) throw validationError(`Cannot sort by non-primitive source field: ${source.fullName}`);
    transformResultType(f.transform, source.field.type);
  }
}
