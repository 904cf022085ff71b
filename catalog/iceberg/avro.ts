/**
 * Avro for manifests: the object container file format (read and write, `null` and `deflate` codecs)
 * around `avsc`, 64-bit longs decoded exactly as `bigint`, the conversion of an Iceberg struct to the
 * Avro schema Java Iceberg writes (`field-id` / `element-id` / `key-id` attributes, `rNNN` record
 * names, optional fields as `["null", T]` unions, int-keyed maps as arrays of `kK_vV` records), and
 * field-id based reading so files from any writer (renamed fields, PyIceberg's layout) decode alike.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { IcebergError } from './errors.js';
import { decimalRequiredBytes } from './types.js';
import type { IcebergType, NestedField, PrimitiveType, StructType } from './types.js';

/** Avro `long` as `bigint`, so snapshot ids keep all 64 bits. */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(n);
    return b;
  },
  fromJSON: (v: unknown) => BigInt(v as string | number),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

const MAGIC = Buffer.from('Obj\x01', 'latin1');
const HEADER_TYPE = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});
const LONG_TYPE = avro.Type.forSchema('long');

export type AvroCodec = 'null' | 'deflate';

/** A decoded container file: its metadata (as strings), the writer schema JSON and the records. */
export interface AvroFile {
  readonly metadata: ReadonlyMap<string, string>;
  readonly schema: AvroSchema;
  readonly records: readonly unknown[];
}

/** Avro schema JSON (loosely typed: it comes from files). */
export type AvroSchema = string | AvroSchemaObject | readonly AvroSchema[];
export interface AvroSchemaObject {
  readonly type: AvroSchema;
  readonly [key: string]: unknown;
}

function corrupt(message: string): IcebergError {
  return new IcebergError('BadRequestException', `Invalid Avro file: ${message}`);
}

/** Rewrites `{"type":"long", logicalType…}` to plain `"long"` so the bigint long applies and avsc never interprets logical types. */
function plainPrimitives(schema: AvroSchema): AvroSchema {
  if (typeof schema === 'string') return schema;
  if (Array.isArray(schema)) return schema.map(plainPrimitives);
  const obj = schema as AvroSchemaObject;
  if (typeof obj.type === 'string' && ['long', 'int', 'string', 'bytes', 'boolean', 'float', 'double', 'null'].includes(obj.type)) return obj.type;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'logicalType') continue;
    if (k === 'type') out[k] = plainPrimitives(v as AvroSchema);
    else if (k === 'fields' && Array.isArray(v)) out[k] = v.map((f: Record<string, unknown>) => ({ ...f, type: plainPrimitives(f['type'] as AvroSchema) }));
    else if ((k === 'items' || k === 'values') && v !== undefined) out[k] = plainPrimitives(v as AvroSchema);
    else out[k] = v;
  }
  return out as AvroSchemaObject;
}

function avscType(schema: AvroSchema): avro.Type {
  return avro.Type.forSchema(plainPrimitives(schema) as avro.Schema, { registry: { long: BIGINT_LONG } as unknown as Record<string, avro.Type>, wrapUnions: false });
}

/**
 * Decoders by writer-schema text. `avsc` compiles a type into generated code, which costs far more
 * than decoding a manifest (it was two thirds of scan planning, and most of the server thread's
 * garbage, under a steady query load), while a table's manifests share one schema per spec. A
 * memo of a pure function, bounded, holding no request state: safe to share across servers.
 */
const DECODERS = new Map<string, avro.Type>();
const MAX_DECODERS = 256;

function decoderFor(schemaText: string, schema: AvroSchema): avro.Type {
  let type = DECODERS.get(schemaText);
  if (type === undefined) {
    type = avscType(schema);
    if (DECODERS.size >= MAX_DECODERS) DECODERS.delete(DECODERS.keys().next().value!);
    DECODERS.set(schemaText, type);
  }
  return type;
}

/** Decodes an Avro object container file. */
export function readAvroFile(bytes: Uint8Array): AvroFile {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 4 || !buf.subarray(0, 4).equals(MAGIC)) throw corrupt('bad magic');
  const header = HEADER_TYPE.decode(buf, 0) as unknown as { value: { meta: Record<string, Buffer>; sync: Buffer }; offset: number };
  if (header.offset < 0) throw corrupt('truncated header');
  const metadata = new Map<string, string>();
  for (const [k, v] of Object.entries(header.value.meta)) metadata.set(k, v.toString('utf8'));
  const schemaText = metadata.get('avro.schema');
  if (schemaText === undefined) throw corrupt('missing avro.schema');
  const schema = JSON.parse(schemaText) as AvroSchema;
  const codec = metadata.get('avro.codec') ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') throw corrupt(`unsupported codec ${codec}`);
  const type = decoderFor(schemaText, schema);
  const sync = header.value.sync;
  const records: unknown[] = [];
  let pos = header.offset;
  while (pos < buf.length) {
    const count = LONG_TYPE.decode(buf, pos) as unknown as { value: number; offset: number };
    const size = LONG_TYPE.decode(buf, count.offset) as unknown as { value: number; offset: number };
    if (count.offset < 0 || size.offset < 0) throw corrupt('truncated block header');
    const end = size.offset + size.value;
    if (end + 16 > buf.length) throw corrupt('truncated block');
    let block = buf.subarray(size.offset, end);
    if (!buf.subarray(end, end + 16).equals(sync)) throw corrupt('sync marker mismatch');
    if (codec === 'deflate') block = inflateRawSync(block);
    let p = 0;
    for (let i = 0; i < count.value; i++) {
      const r = type.decode(block, p) as unknown as { value: unknown; offset: number };
      if (r.offset < 0) throw corrupt('truncated record');
      records.push(r.value);
      p = r.offset;
    }
    pos = end + 16;
  }
  return { metadata, schema, records };
}

/** Encodes records as an Avro object container file. `metadata` keys are written after `avro.schema` and `avro.codec`. */
export function writeAvroFile(schema: AvroSchema, records: readonly unknown[], metadata: ReadonlyMap<string, string>, codec: AvroCodec = 'deflate'): Uint8Array {
  const type = avscType(schema);
  const meta: Record<string, Buffer> = { 'avro.schema': Buffer.from(JSON.stringify(schema)), 'avro.codec': Buffer.from(codec) };
  for (const [k, v] of metadata) Object.defineProperty(meta, k, { value: Buffer.from(v, 'utf8'), enumerable: true, writable: true, configurable: true });
  const sync = randomBytes(16);
  const parts: Buffer[] = [HEADER_TYPE.toBuffer({ magic: MAGIC, meta, sync })];
  const RECORDS_PER_BLOCK = 1000;
  for (let i = 0; i < records.length; i += RECORDS_PER_BLOCK) {
    const chunk = records.slice(i, i + RECORDS_PER_BLOCK);
    let block: Buffer = Buffer.concat(chunk.map((r) => type.toBuffer(r)));
    if (codec === 'deflate') block = deflateRawSync(block);
    parts.push(LONG_TYPE.toBuffer(chunk.length), LONG_TYPE.toBuffer(block.length), block, sync);
  }
  return new Uint8Array(Buffer.concat(parts));
}

// ---------------------------------------------------------------------------------------------
// Iceberg struct → Avro schema (Java's AvroSchemaUtil.convert)

/**
 * The Avro schema Java writes for an Iceberg struct: top-level record `recordName`, nested records
 * `r<fieldId>`, list element records `r<elementId>`, int-keyed maps as arrays of `k<keyId>_v<valueId>`
 * records with `logicalType: map`. Named fixed types (`fixed_16`, `decimal_9_2`, `uuid_fixed`) are
 * defined once and referenced by name afterwards, as Avro requires.
 */
export function icebergToAvroSchema(struct: StructType, recordName: string): AvroSchemaObject {
  const defined = new Set<string>();
  const named = (name: string, schema: AvroSchemaObject): AvroSchema => {
    if (defined.has(name)) return name;
    defined.add(name);
    return schema;
  };
  const convert = (type: IcebergType, nameHint: string): AvroSchema => {
    switch (type.kind) {
      case 'struct':
        return record(type, nameHint);
      case 'list': {
        const element = convert(type.element, `r${type.elementId}`);
        return { type: 'array', items: type.elementRequired ? element : ['null', element], 'element-id': type.elementId };
      }
      case 'map': {
        const key = convert(type.key, `r${type.keyId}`);
        const value = convert(type.value, `r${type.valueId}`);
        if (type.key.kind === 'string') return { type: 'map', values: type.valueRequired ? value : ['null', value], 'key-id': type.keyId, 'value-id': type.valueId };
        return {
          type: 'array',
          items: {
            type: 'record',
            name: `k${type.keyId}_v${type.valueId}`,
            fields: [
              { name: 'key', type: key, 'field-id': type.keyId },
              { name: 'value', type: type.valueRequired ? value : ['null', value], 'field-id': type.valueId },
            ],
          },
          logicalType: 'map',
        };
      }
      default:
        return primitive(type);
    }
  };
  const primitive = (type: PrimitiveType): AvroSchema => {
    switch (type.kind) {
      case 'boolean': case 'int': case 'long': case 'float': case 'double': case 'string':
        return type.kind;
      case 'binary':
        return 'bytes';
      case 'date':
        return { type: 'int', logicalType: 'date' };
      case 'time':
        return { type: 'long', logicalType: 'time-micros' };
      case 'timestamp':
        return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false };
      case 'timestamptz':
        return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true };
      case 'timestamp_ns':
        return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false };
      case 'timestamptz_ns':
        return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true };
      case 'uuid':
        return named('uuid_fixed', { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' });
      case 'fixed':
        return named(`fixed_${type.length}`, { type: 'fixed', name: `fixed_${type.length}`, size: type.length });
      case 'decimal': {
        const name = `decimal_${type.precision}_${type.scale}`;
        return named(name, { type: 'fixed', name, size: decimalRequiredBytes(type.precision), logicalType: 'decimal', precision: type.precision, scale: type.scale });
      }
      case 'unknown':
        return 'null';
      case 'variant': case 'geometry': case 'geography':
        return 'bytes';
    }
  };
  const fieldSchema = (f: NestedField): Record<string, unknown> => {
    const t = convert(f.type, `r${f.id}`);
    const out: Record<string, unknown> = { name: avroName(f.name), type: f.required ? t : ['null', t] };
    if (f.doc !== undefined) out['doc'] = f.doc;
    if (!f.required) out['default'] = null;
    out['field-id'] = f.id;
    return out;
  };
  const record = (type: StructType, name: string): AvroSchemaObject => ({ type: 'record', name, fields: type.fields.map(fieldSchema) });
  return record(struct, recordName);
}

/** Java's `AvroSchemaUtil.makeCompatibleName`: invalid characters become `_x<HEX>`, a leading digit gets `_`. */
export function avroName(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return name;
  let out = '';
  [...name].forEach((ch, i) => {
    const valid = i === 0 ? /[A-Za-z_]/.test(ch) : /[A-Za-z0-9_]/.test(ch);
    if (valid) out += ch;
    else if (i === 0 && /[0-9]/.test(ch)) out += `_${ch}`;
    else out += `_x${(ch.codePointAt(0) as number).toString(16).toUpperCase()}`;
  });
  return out === '' ? '_' : out;
}

// ---------------------------------------------------------------------------------------------
// Reading by field id

/** A decoded record keyed by Iceberg field id (values of nested records are again `ById`). */
export type ById = ReadonlyMap<number, unknown>;

function unwrapUnion(schema: AvroSchema): AvroSchema {
  if (Array.isArray(schema)) {
    const nonNull = schema.filter((s) => s !== 'null');
    return nonNull.length === 1 ? (nonNull[0] as AvroSchema) : schema;
  }
  return schema;
}

/**
 * Re-keys a generically decoded value by the `field-id` attributes of its writer schema: records become
 * `Map<fieldId, value>`, arrays are converted element-wise; fields without an id are dropped.
 */
export function byFieldId(value: unknown, schema: AvroSchema, namedTypes = new Map<string, AvroSchemaObject>()): unknown {
  if (value === null || value === undefined) return value;
  let s = unwrapUnion(schema);
  if (typeof s === 'string') {
    const namedType = namedTypes.get(s);
    if (namedType === undefined) return value;
    s = namedType;
  }
  if (Array.isArray(s)) return value;
  const obj = s as AvroSchemaObject;
  if (typeof obj.type !== 'string') return byFieldId(value, obj.type, namedTypes);
  if (typeof obj['name'] === 'string' && (obj.type === 'record' || obj.type === 'fixed')) namedTypes.set(obj['name'], obj);
  if (obj.type === 'record') {
    const fields = (obj['fields'] ?? []) as readonly { name: string; type: AvroSchema; 'field-id'?: number }[];
    const out = new Map<number, unknown>();
    const rec = value as Record<string, unknown>;
    for (const f of fields) {
      if (typeof f['field-id'] === 'number') out.set(f['field-id'], byFieldId(rec[f.name], f.type, namedTypes));
      else byFieldId(undefined, f.type, namedTypes);
    }
    return out;
  }
  if (obj.type === 'array') return (value as unknown[]).map((v) => byFieldId(v, obj['items'] as AvroSchema, namedTypes));
  if (obj.type === 'map') {
    const out = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.set(k, byFieldId(v, obj['values'] as AvroSchema, namedTypes));
    return out;
  }
  return value;
}

/** Finds the (union-unwrapped) schema of the field with `fieldId` in a record schema. */
export function fieldSchemaById(record: AvroSchema, fieldId: number): AvroSchema | undefined {
  const r = unwrapUnion(record);
  if (typeof r !== 'object' || Array.isArray(r)) return undefined;
  const fields = ((r as AvroSchemaObject)['fields'] ?? []) as readonly { type: AvroSchema; 'field-id'?: number }[];
  const f = fields.find((x) => x['field-id'] === fieldId);
  return f === undefined ? undefined : unwrapUnion(f.type);
}

/**
 * The Iceberg type of an Avro schema node (for partition tuples read without table metadata):
 * logical types give date / time / timestamps / decimal / uuid, a fixed gives `fixed[n]`.
 */
export function icebergTypeOfAvro(schema: AvroSchema): PrimitiveType {
  const s = unwrapUnion(schema);
  if (typeof s === 'string') {
    switch (s) {
      case 'boolean': case 'int': case 'long': case 'float': case 'double': case 'string':
        return { kind: s };
      case 'bytes':
        return { kind: 'binary' };
      default:
        return { kind: 'unknown' };
    }
  }
  if (Array.isArray(s)) return { kind: 'unknown' };
  const obj = s as AvroSchemaObject;
  const logical = obj['logicalType'];
  const adjust = obj['adjust-to-utc'] === true;
  switch (logical) {
    case 'date':
      return { kind: 'date' };
    case 'time-micros':
      return { kind: 'time' };
    case 'timestamp-micros':
      return { kind: adjust ? 'timestamptz' : 'timestamp' };
    case 'timestamp-nanos':
      return { kind: adjust ? 'timestamptz_ns' : 'timestamp_ns' };
    case 'decimal':
      return { kind: 'decimal', precision: Number(obj['precision']), scale: Number(obj['scale'] ?? 0) };
    case 'uuid':
      return { kind: 'uuid' };
  }
  if (obj.type === 'fixed') return { kind: 'fixed', length: Number(obj['size']) };
  return typeof obj.type === 'string' || Array.isArray(obj.type) ? icebergTypeOfAvro(obj.type as AvroSchema) : { kind: 'unknown' };
}

/** `{"type":"struct","schema-id":0,"fields":…}`: the `iceberg.schema` metadata Java's Avro writer adds. */
export function withSchemaId(structJson: unknown): Record<string, unknown> {
  const { type, ...rest } = structJson as Record<string, unknown>;
  return { type, 'schema-id': 0, ...rest };
}
