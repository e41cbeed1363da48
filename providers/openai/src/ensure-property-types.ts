import type { JsonSchema } from '@kosong/core';

const COMBINATOR_KEYS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', '$ref'] as const;
const OBJECT_KEYS = ['properties', 'additionalProperties', 'patternProperties', 'propertyNames', 'required', 'minProperties', 'maxProperties'];
const ARRAY_KEYS = ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'];
const STRING_KEYS = ['minLength', 'maxLength', 'pattern', 'format'];
const NUMBER_KEYS = ['minimum', 'maximum', 'multipleOf', 'exclusiveMinimum', 'exclusiveMaximum'];

type SchemaNode = Record<string, unknown>;

/**
 * A copy of a tool's parameter schema in which every property schema has a `type` (kosong spec
 * §6.2; the Kimi API rejects properties without one). The input is not modified.
 *
 * The walk normalises each schema under `properties`, `items` (one or a list),
 * `additionalProperties` and every branch of `anyOf`/`oneOf`/`allOf`, recursively; the root is a
 * container and never gets a `type`. A schema that has no `type` and none of `anyOf`, `oneOf`,
 * `allOf`, `not`, `if`, `then`, `else`, `$ref` gets one, inferred from (first match):
 *
 * 1. a non-empty `enum`: the kind of its values;
 * 2. a `const`: the kind of that value;
 * 3. structure: object keywords → `object`, array keywords → `array`, string keywords (`pattern`,
 *    `format`, lengths) → `string`, numeric bounds → `number`;
 * 4. otherwise `string`.
 *
 * Values of one kind give that kind (`boolean`, `integer`, `number`, `string`, `null`, `object`,
 * `array`); integers mixed with other numbers give `number`; any other mix gives `string`.
 * JavaScript has no `1.0` distinct from `1`, so whole numbers always count as integers: `[1.0, 2]`
 * is `integer` here, where the Python original says `number`.
 */
export function ensurePropertyTypes(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema) as SchemaNode;
  recurseSchema(copy);
  return copy;
}

function recurseSchema(node: SchemaNode): void {
  const properties = node['properties'];
  if (isNode(properties)) for (const value of Object.values(properties)) normalizeProperty(value);
  const items = node['items'];
  if (Array.isArray(items)) for (const item of items) normalizeProperty(item);
  else normalizeProperty(items);
  normalizeProperty(node['additionalProperties']);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const branches = node[key];
    if (Array.isArray(branches)) for (const branch of branches) normalizeProperty(branch);
  }
}

function normalizeProperty(value: unknown): void {
  if (!isNode(value)) return;
  if (!('type' in value) && !COMBINATOR_KEYS.some((key) => key in value)) value['type'] = inferType(value);
  recurseSchema(value);
}

function inferType(node: SchemaNode): string {
  const values = node['enum'];
  if (Array.isArray(values) && values.length > 0) return typeOfValues(values);
  if ('const' in node) return typeOfValues([node['const']]);
  const has = (keys: readonly string[]): boolean => keys.some((key) => key in node);
  if (has(OBJECT_KEYS)) return 'object';
  if (has(ARRAY_KEYS)) return 'array';
  if (has(STRING_KEYS)) return 'string';
  if (has(NUMBER_KEYS)) return 'number';
  return 'string';
}

function typeOfValues(values: readonly unknown[]): string {
  const kinds = new Set(values.map(kindOf));
  if (kinds.size === 1) return [...kinds][0]!;
  if (kinds.size === 2 && kinds.has('integer') && kinds.has('number')) return 'number';
  return 'string';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'object':
      return 'object';
    default:
      return 'string';
  }
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
