/**
 * Validates HTTP exchanges against the Iceberg REST OpenAPI document
 * (../shared/spec/iceberg-rest-catalog-open-api.yaml): the request body against the operation's
 * request schema, the status against the operation's documented responses, and the response body
 * against that response's schema. Paths the document does not define (Floe's `/v1/catalogs`) are
 * checked only for the error shape. Used by every catalog test, so the suite's responses are
 * checked by code, not by eye.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';

const PROJECT_ROOT = path.resolve(fileURLToPath(new URL('../../../', import.meta.url)));
export const OPENAPI_SPEC = path.resolve(PROJECT_ROOT, '../shared/spec/iceberg-rest-catalog-open-api.yaml');

type Json = Record<string, unknown>;

interface Operation {
  readonly requestBody?: Json;
  readonly responses: Readonly<Record<string, Json>>;
}

interface PathEntry {
  readonly template: string;
  readonly regex: RegExp;
  /** Literal characters: a more literal template wins over a parametric one. */
  readonly literal: number;
  readonly operations: Readonly<Record<string, Operation>>;
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly paths: readonly PathEntry[];
  private readonly compiled = new Map<string, ValidateFunction>();
  /** How many exchanges were checked (tests assert it is not zero). */
  checked = 0;

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
    this.ajv.addSchema({ ...doc, $id: 'iceberg-rest' } as never);
    this.paths = Object.entries(doc['paths'] as Record<string, Record<string, Operation>>).map(([template, ops]) => ({
      template,
      regex: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      literal: template.replace(/\{[^}]+\}/g, '').length,
      operations: ops,
    }));
  }

  static load(file: string = OPENAPI_SPEC): OpenApiValidator {
    return new OpenApiValidator(parseYaml(readFileSync(file, 'utf8')) as Json);
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (v === undefined) {
      v = this.ajv.compile({ $ref: `iceberg-rest${pointer}` });
      this.compiled.set(pointer, v);
    }
    return v;
  }

  private resolve(obj: Json): Json {
    let o = obj;
    while (typeof o['$ref'] === 'string') {
      const ref = (o['$ref'] as string).replace(/^#\//, '').split('/');
      o = ref.reduce<Json>((acc, k) => acc[k] as Json, this.doc);
    }
    return o;
  }

  private operation(method: string, url: string): { readonly entry: PathEntry; readonly op: Operation } | undefined {
    const p = url.split('?')[0] as string;
    const matches = this.paths.filter((e) => e.regex.test(p)).sort((a, b) => b.literal - a.literal);
    for (const entry of matches) {
      const op = entry.operations[method.toLowerCase()];
      if (op !== undefined) return { entry, op };
    }
    return undefined;
  }

  /** Pointer of the JSON schema for a response, or null when the response has no body. */
  private responseSchema(op: Operation, opPointer: string, status: number): string | null | undefined {
    const responses = op.responses;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
    if (key === undefined) return undefined;
    let response = responses[key] as Json;
    let pointer = `${opPointer}/responses/${key}`;
    while (typeof response['$ref'] === 'string') {
      pointer = (response['$ref'] as string).replace(/^#/, '');
      response = this.resolve(response);
    }
    const content = response['content'] as Record<string, Json> | undefined;
    if (content === undefined || content['application/json'] === undefined) return null;
    return `#${pointer}/content/application~1json/schema`;
  }

  /** Problems with a request body sent to `method url` (empty = valid). */
  validateRequest(method: string, url: string, body: unknown): readonly string[] {
    const found = this.operation(method, url);
    if (found === undefined) return [];
    const rb = found.op.requestBody;
    if (rb === undefined) return [];
    const pointer = `#/paths/${found.entry.template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/requestBody`;
    let resolved = rb;
    let ptr = pointer;
    while (typeof resolved['$ref'] === 'string') {
      ptr = `#${(resolved['$ref'] as string).replace(/^#/, '')}`;
      resolved = this.resolve(resolved);
    }
    const content = resolved['content'] as Record<string, Json> | undefined;
    if (content?.['application/json'] === undefined) return [];
    const v = this.validator(`${ptr}/content/application~1json/schema`.replace(/^#/, '#'));
    return v(body) ? [] : [`request ${method} ${url}: ${this.ajv.errorsText(v.errors)}`];
  }

  /** Problems with a response (empty = valid). `body` is the raw text. */
  validateResponse(method: string, url: string, status: number, body: string): readonly string[] {
    this.checked++;
    const found = this.operation(method, url);
    const parsed = body === '' ? undefined : (JSON.parse(body) as unknown);
    if (found === undefined) {
      if (status >= 400 && method !== 'HEAD') {
        const v = this.validator('#/components/schemas/IcebergErrorResponse');
        return v(parsed) ? [] : [`${method} ${url} → ${status}: not an Iceberg error body: ${this.ajv.errorsText(v.errors)}`];
      }
      return [];
    }
    const opPointer = `#/paths/${found.entry.template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}`;
    const schema = this.responseSchema(found.op, opPointer.replace(/^#/, ''), status);
    // 413 is Floe's documented addition (docs/spec-differences.md): the spec names no body limit.
    if (schema === undefined && status === 413) {
      const v = this.validator('#/components/schemas/IcebergErrorResponse');
      return v(parsed) ? [] : [`${method} ${url} → ${status}: not an Iceberg error body: ${this.ajv.errorsText(v.errors)}`];
    }
    if (schema === undefined) return [`${method} ${url} → ${status}: status not documented for ${found.entry.template}`];
    if (schema === null || method === 'HEAD') return [];
    if (parsed === undefined) return [`${method} ${url} → ${status}: empty body where the spec documents one`];
    // A few operations (createView, replaceView 409/500) name the bare ErrorModel where their own
    // examples, Java's client and every other route use the IcebergErrorResponse wrapper: accept
    // the wrapper there and check its `error` member against ErrorModel.
    const raw = schema.replace(/^#/, '').split('/').slice(1).map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~')).reduce<Json>((acc, k) => acc[k] as Json, this.doc);
    if (raw['$ref'] === '#/components/schemas/ErrorModel' && typeof parsed === 'object' && parsed !== null && 'error' in parsed) {
      const v = this.validator('#/components/schemas/IcebergErrorResponse');
      return v(parsed) ? [] : [`${method} ${url} → ${status}: ${this.ajv.errorsText(v.errors)} in ${body.slice(0, 300)}`];
    }
    const v = this.validator(schema);
    return v(parsed) ? [] : [`${method} ${url} → ${status}: ${this.ajv.errorsText(v.errors)} in ${body.slice(0, 300)}`];
  }
}
