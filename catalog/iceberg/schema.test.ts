import t from 'tap';
import fc from 'fast-check';
import { JsonSyntaxError, parseJson, stringifyJson } from './json.js';
import { assignFreshIds, findFieldById, findFieldByName, highestFieldId, schema, schemaEvolutionProblems, schemaFromJson, schemaToJson } from './schema.js';
import { Types, decimalRequiredBytes, isPromotionAllowed, nestedField, parsePrimitiveType, primitiveToString, typeFromJson, typeToJson } from './types.js';
import type { IcebergType, NestedField } from './types.js';

t.test('JSON: int64 exact, Jackson pretty layout, __proto__ keys', async (t) => {
  t.same(parseJson('{"a": 7817332053627255703}'), { a: 7817332053627255703n });
  t.same(parseJson('[7817332053627255703, 1, -9223372036854775808, 1.5, 1e3]'), [7817332053627255703n, 1, -9223372036854775808n, 1.5, 1000]);
  t.equal(stringifyJson({ a: 7817332053627255703n, b: [1, 2], c: [], d: {}, e: [{ x: 'y' }] }, { pretty: true }), '{\n  "a" : 7817332053627255703,\n  "b" : [ 1, 2 ],\n  "c" : [ ],\n  "d" : { },\n  "e" : [ {\n    "x" : "y"\n  } ]\n}');
  const proto = parseJson('{"__proto__": "x"}') as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(proto), Object.prototype);
  t.equal(Object.keys(proto)[0], '__proto__');
  t.equal(stringifyJson(new Map([['k', 1n]])), '{"k":1}');
  for (const bad of ['{', '[1,]', '{"a" 1}', '"\\x"', '01', 'nul', '1 2']) t.throws(() => parseJson(bad), JsonSyntaxError, bad);
  fc.assert(fc.property(fc.jsonValue(), (v) => stringifyJson(parseJson(JSON.stringify(v))) === JSON.stringify(v)));
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
    const back = parseJson(stringifyJson({ n }));
    const v = (back as Record<string, unknown>)['n'];
    return BigInt(v as number | bigint) === n;
  }));
});

t.test('primitive type strings', async (t) => {
  for (const s of ['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'binary', 'unknown', 'variant', 'fixed[16]', 'decimal(9, 2)']) {
    const p = parsePrimitiveType(s);
    t.ok(p, s);
    t.equal(primitiveToString(p!), s);
  }
  t.same(parsePrimitiveType('decimal(38,10)'), Types.decimal(38, 10));
  t.same(parsePrimitiveType('geometry(srid:4326)'), { kind: 'geometry', text: 'geometry(srid:4326)' });
  t.throws(() => typeFromJson('varchar'), { name: 'BadRequestException' });
  t.equal(decimalRequiredBytes(9), 4);
  t.equal(decimalRequiredBytes(15), 7);
  t.equal(decimalRequiredBytes(38), 16);
});

const nested = schema(3, [
  nestedField(1, 'id', Types.long, true),
  nestedField(2, 'point', Types.struct([nestedField(3, 'x', Types.double, true), nestedField(4, 'y', Types.double, true)])),
  nestedField(5, 'tags', Types.list(6, Types.string)),
  nestedField(7, 'attrs', Types.map(8, Types.string, 9, Types.struct([nestedField(10, 'v', Types.int)]))),
  { ...nestedField(11, 'price', Types.decimal(9, 2)), doc: 'in EUR', initialDefault: '1.00', writeDefault: '2.00' },
], [1]);

t.test('schema JSON matches the spec shape and round trips', async (t) => {
  const json = schemaToJson(nested);
  t.same(parseJson(stringifyJson(json)), json);
  t.same(schemaFromJson(json), nested);
  t.match(stringifyJson(json), /"identifier-field-ids":\[1\]/);
  t.match(stringifyJson(json), /"type":"list","element-id":6,"element":"string","element-required":false/);
  t.match(stringifyJson(json), /"type":"map","key-id":8,"key":"string","value-id":9,"value":\{"type":"struct"/);
  t.match(stringifyJson(json), /"doc":"in EUR","initial-default":"1.00","write-default":"2.00"/);
  t.match(stringifyJson(json), /"type":"decimal\(9, 2\)"/);
});

t.test('lookups by id and name', async (t) => {
  t.equal(findFieldById(nested, 4)?.name, 'y');
  t.equal(findFieldByName(nested, 'point.y')?.id, 4);
  t.equal(findFieldByName(nested, 'tags.element')?.id, 6);
  t.equal(findFieldByName(nested, 'attrs.value.v')?.id, 10);
  t.equal(findFieldByName(nested, 'POINT.X', false)?.id, 3);
  t.equal(findFieldByName(nested, 'nope'), undefined);
  t.equal(highestFieldId(nested), 11);
});

t.test('fresh ids: breadth first like Java assignFreshIds', async (t) => {
  let next = 0;
  const fresh = assignFreshIds(schema(0, [
    nestedField(50, 'a', Types.struct([nestedField(60, 'b', Types.int), nestedField(61, 'c', Types.list(62, Types.int))])),
    nestedField(51, 'd', Types.map(70, Types.string, 71, Types.long)),
    nestedField(52, 'e', Types.int, true),
  ], [52]), 0, () => ++next);
  t.same(fresh.fields.map((f) => f.id), [1, 2, 3], 'top-level fields first');
  const a = fresh.fields[0]!.type as unknown as { fields: NestedField[] };
  t.same(a.fields.map((f) => f.id), [4, 5]);
  t.same((a.fields[1]!.type as { elementId: number }).elementId, 6);
  t.same([(fresh.fields[1]!.type as { keyId: number }).keyId, (fresh.fields[1]!.type as { valueId: number }).valueId], [7, 8]);
  t.same(fresh.identifierFieldIds, [3]);
});

t.test('type promotion and evolution checks', async (t) => {
  t.ok(isPromotionAllowed(Types.int, Types.long));
  t.ok(isPromotionAllowed(Types.float, Types.double));
  t.ok(isPromotionAllowed(Types.decimal(9, 2), Types.decimal(18, 2)));
  t.notOk(isPromotionAllowed(Types.decimal(9, 2), Types.decimal(18, 3)));
  t.notOk(isPromotionAllowed(Types.decimal(18, 2), Types.decimal(9, 2)));
  t.notOk(isPromotionAllowed(Types.long, Types.int));
  t.notOk(isPromotionAllowed(Types.string, Types.binary));
  const before = schema(0, [nestedField(1, 'a', Types.int), nestedField(2, 'b', Types.float, true)]);
  t.same(schemaEvolutionProblems(before, schema(1, [nestedField(1, 'a', Types.long), nestedField(2, 'b', Types.double, true), nestedField(3, 'c', Types.string)])), []);
  const problems = schemaEvolutionProblems(before, schema(1, [nestedField(1, 'a', Types.string, true), nestedField(3, 'c', Types.string, true)]));
  t.same(problems.map((p) => p.fieldId), [1, 1, 3]);
});

const arbitraryType: fc.Arbitrary<IcebergType> = fc.letrec<{ type: IcebergType }>((tie) => ({
  type: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<IcebergType>(Types.boolean, Types.int, Types.long, Types.string, Types.uuid, Types.timestamptz, Types.decimal(10, 3), Types.fixed(7)),
    fc.array(fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.string({ minLength: 1 }), tie('type'), fc.boolean()), { maxLength: 3 }).map((fs) => Types.struct(fs.map(([id, name, type, req]) => nestedField(id, name, type, req)))),
    fc.tuple(fc.integer({ min: 1, max: 1000 }), tie('type'), fc.boolean()).map(([id, e, r]) => Types.list(id, e, r)),
    fc.tuple(fc.integer({ min: 1, max: 1000 }), tie('type'), fc.boolean()).map(([id, v, r]) => Types.map(id, Types.string, id + 1, v, r)),
  ),
})).type;

t.test('property: any type survives its JSON form', async (t) => {
  fc.assert(fc.property(arbitraryType, (type) => JSON.stringify(typeToJson(typeFromJson(parseJson(stringifyJson(typeToJson(type)))))) === JSON.stringify(typeToJson(type))));
  t.pass();
});
