import t from 'tap';
import { parseJson, stringifyJson } from './json.js';
import { schema } from './schema.js';
import { Types, nestedField } from './types.js';
import {
  applyViewUpdates, checkViewRequirements, currentViewVersion, newViewMetadata, parseViewMetadata, serializeViewMetadata, viewRequirementFromJson,
  viewUpdateFromJson, viewUpdateToJson,
} from './view-metadata.js';
import type { ViewUpdate, ViewVersion } from './view-metadata.js';

const S = schema(0, [nestedField(1, 'n', Types.long)]);
const version = (sql: string, ts: number, schemaId = -1): ViewVersion => ({
  versionId: 1,
  timestampMs: ts,
  schemaId,
  summary: new Map([['engine-name', 'floe']]),
  representations: [{ type: 'sql', sql, dialect: 'duckdb' }],
  defaultNamespace: ['db'],
});

t.test('create, replace, -1 rules, version log, round trip', async (t) => {
  const v = newViewMetadata({ schema: S, viewVersion: version('select 1 as n', 1000), location: 'file:///w/v', viewUuid: 'vvvv' });
  t.equal(v.currentVersionId, 1);
  t.equal(currentViewVersion(v).schemaId, 0);
  t.same(v.versionLog, [{ versionId: 1, timestampMs: 1000 }]);
  const replaced = applyViewUpdates(v, [
    { action: 'add-schema', schema: schema(0, [nestedField(1, 'n', Types.long), nestedField(2, 'm', Types.string)]) },
    { action: 'add-view-version', viewVersion: version('select 1 as n, \'x\' as m', 2000) },
    { action: 'set-current-view-version', viewVersionId: -1 },
  ]);
  t.equal(replaced.currentVersionId, 2);
  t.equal(currentViewVersion(replaced).schemaId, 1);
  t.same(replaced.versionLog.map((e) => e.versionId), [1, 2]);
  const text = serializeViewMetadata(replaced);
  t.same(parseViewMetadata(text), replaced);
  t.equal(serializeViewMetadata(parseViewMetadata(text)), text);
  // Re-adding the first version's query reuses its id.
  const back = applyViewUpdates(replaced, [{ action: 'add-view-version', viewVersion: version('select 1 as n', 3000, 0) }, { action: 'set-current-view-version', viewVersionId: -1 }]);
  t.equal(back.currentVersionId, 1);
  t.equal(back.versions.length, 2);
});

t.test('validation and requirements', async (t) => {
  const v = newViewMetadata({ schema: S, viewVersion: version('select 1 as n', 1000), location: '/v', viewUuid: 'vvvv' });
  t.throws(() => applyViewUpdates(v, [{ action: 'set-current-view-version', viewVersionId: -1 }]), /no views have been added/);
  t.throws(() => applyViewUpdates(v, [{ action: 'set-current-view-version', viewVersionId: 7 }]), /unknown version: 7/);
  t.throws(() => applyViewUpdates(v, [{ action: 'add-view-version', viewVersion: version('x', 1, 5) }]), /unknown schema: 5/);
  t.throws(() => applyViewUpdates(v, [{ action: 'add-view-version', viewVersion: version('x', 1) }]), /no schema has been added/);
  t.throws(() => applyViewUpdates(v, [{ action: 'add-view-version', viewVersion: { ...version('x', 1, 0), representations: [{ type: 'sql', sql: 'a', dialect: 'spark' }, { type: 'sql', sql: 'b', dialect: 'Spark' }] } }]), /multiple queries for dialect spark/);
  t.throws(() => applyViewUpdates(v, [{ action: 'upgrade-format-version', formatVersion: 2 }]), { name: 'ValidationException' });
  t.same(checkViewRequirements(v, [viewRequirementFromJson(parseJson('{"type":"assert-view-uuid","uuid":"vvvv"}'))]), []);
  t.match(checkViewRequirements(v, [{ type: 'assert-view-uuid', uuid: 'other' }])[0], /UUID does not match/);
});

t.test('old versions expire past version.history.num-entries', async (t) => {
  let v = newViewMetadata({ schema: S, viewVersion: version('select 0 as n', 1), location: '/v', properties: new Map([['version.history.num-entries', '2']]) });
  for (let i = 1; i <= 4; i++) v = applyViewUpdates(v, [{ action: 'add-view-version', viewVersion: version(`select ${i} as n`, i + 1, 0) }, { action: 'set-current-view-version', viewVersionId: -1 }]);
  t.same(v.versions.map((x) => x.versionId), [4, 5]);
  t.same(v.versionLog.map((x) => x.versionId), [4, 5]);
});

t.test('view updates survive their JSON form', async (t) => {
  const all: ViewUpdate[] = [
    { action: 'assign-uuid', uuid: 'u' },
    { action: 'upgrade-format-version', formatVersion: 1 },
    { action: 'add-schema', schema: S, lastColumnId: 1 },
    { action: 'set-location', location: '/x' },
    { action: 'set-properties', updates: new Map([['a', 'b']]) },
    { action: 'remove-properties', removals: ['a'] },
    { action: 'add-view-version', viewVersion: { ...version('q', 5, -1), defaultCatalog: 'c' } },
    { action: 'set-current-view-version', viewVersionId: -1 },
  ];
  for (const u of all) t.same(viewUpdateFromJson(parseJson(stringifyJson(viewUpdateToJson(u)))), u, u.action);
  t.throws(() => viewUpdateFromJson(parseJson('{"action":"add-snapshot"}')), { name: 'BadRequestException' });
});
