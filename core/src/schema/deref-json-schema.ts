import type { JsonSchema } from '../tooling/tool.js';

/** Keywords whose value is one subschema. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords that only annotate: on a `$ref` node, the use site's value wins over the target's. */
const ANNOTATION_KEYWORDS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);
/** Where definitions live at the top of a document. */
const DEFINITION_KEYWORDS = ['$defs', 'definitions'] as const;

type SchemaObject = { [keyword: string]: unknown };

/**
 * Inlines the local `$ref`s of a JSON Schema (`#`, `#/$defs/Name`, any `#/json/pointer`), so that the
 * model sees every argument's shape where it is used (spec §6.1 `deref_json_schema`), except where
 * the schema is truly recursive: a reference that would have to be inlined into itself is kept, with
 * its definition under `$defs` (or `definitions`); `#` (the root) is never inlined. The other
 * definitions are dropped. The input is not modified.
 *
 * Differences from the original kosong, on purpose: recursion terminates (the original loops); the
 * walk knows the JSON Schema keywords, so a `$ref` inside `enum`, `const`, `default` or `examples`
 * data is left alone; on a `$ref` node with sibling keywords, the siblings' annotations (e.g. a
 * use-site `description`) win over the target's, and if a sibling would override a validation
 * keyword of the target, the two are combined with `allOf` instead of merged. Non-local references
 * (`https://…`) and plain-name fragments (`#anchor`) are left as they are.
 *
 * @throws Error `Unable to resolve reference path: …` for a local pointer that leads nowhere.
 */
export function derefJsonSchema(schema: JsonSchema): JsonSchema {
  return new Dereferencer(schema as SchemaObject).run() as JsonSchema;
}

class Dereferencer {
  /** Pointers that must stay references (inlining them would never end). */
  private readonly recursive = new Set<string>();
  /** The inlined content of each pointer in {@link recursive}, for its definition. */
  private readonly expansions = new Map<string, unknown>();

  constructor(private readonly root: SchemaObject) {}

  run(): unknown {
    const result = this.schema(this.root, [''], true);
    if (!isObject(result)) return result;
    const definitions: Partial<Record<(typeof DEFINITION_KEYWORDS)[number], SchemaObject>> = {};
    // Dereferencing a kept definition may reveal more recursive pointers: repeat until none is new.
    const done = new Set<string>();
    let pending = [...this.recursive];
    while (pending.length > 0) {
      for (const pointer of pending) {
        done.add(pointer);
        const segments = parsePointer(pointer);
        const keyword = segments[0];
        const name = segments[1];
        if (segments.length < 2 || (keyword !== '$defs' && keyword !== 'definitions') || name === undefined) continue;
        const defPointer = `/${escapeSegment(keyword)}/${escapeSegment(name)}`;
        const bucket = (definitions[keyword] ??= {});
        if (Object.hasOwn(bucket, name)) continue;
        bucket[name] =
          pointer === defPointer && this.expansions.has(pointer)
            ? this.expansions.get(pointer)
            : this.schema(this.resolve(defPointer, `#${defPointer}`), [defPointer], false);
      }
      pending = [...this.recursive].filter((pointer) => !done.has(pointer));
    }
    for (const keyword of DEFINITION_KEYWORDS) {
      const bucket = definitions[keyword];
      if (bucket) result[keyword] = sortLike(bucket, this.root[keyword]);
    }
    return result;
  }

  /** A (sub)schema, dereferenced. `stack`: the pointers being inlined around it. */
  private schema(node: unknown, stack: readonly string[], isRoot: boolean): unknown {
    if (!isObject(node)) return structuredCloneJson(node); // boolean schemas (and malformed ones, copied as they are)
    const ref = node['$ref'];
    if (typeof ref !== 'string' || !isLocalPointer(ref)) return this.keywords(node, stack, isRoot);

    const pointer = decodeFragment(ref);
    const siblings = this.keywords(node, stack, false, true);
    if (stack.includes(pointer) || this.recursive.has(pointer)) {
      this.recursive.add(pointer);
      return { $ref: ref, ...siblings };
    }
    const expanded = this.schema(this.resolve(pointer, ref), [...stack, pointer], false);
    if (this.recursive.has(pointer)) {
      this.expansions.set(pointer, expanded);
      return { $ref: ref, ...siblings };
    }
    return merge(expanded, siblings);
  }

  /** The keywords of a schema object, each subschema dereferenced. */
  private keywords(node: SchemaObject, stack: readonly string[], isRoot: boolean, withoutRef = false): SchemaObject {
    const out: SchemaObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (withoutRef && key === '$ref') continue;
      // Top-level definitions are only reached through references; the kept ones are added back by run().
      if (isRoot && (key === '$defs' || key === 'definitions')) continue;
      let result: unknown;
      if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
        result = value.map((item) => this.schema(item, stack, false));
      } else if (SCHEMA_KEYWORDS.has(key)) {
        result = this.schema(value, stack, false);
      } else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
        const map: SchemaObject = {};
        for (const [name, item] of Object.entries(value)) {
          // `dependencies` values may be arrays of property names (draft 7): not schemas.
          define(map, name, Array.isArray(item) ? structuredCloneJson(item) : this.schema(item, stack, false));
        }
        result = map;
      } else {
        result = structuredCloneJson(value);
      }
      define(out, key, result);
    }
    return out;
  }

  private resolve(pointer: string, ref: string): unknown {
    let node: unknown = this.root;
    for (const segment of parsePointer(pointer)) {
      if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(segment) && Number(segment) < node.length) node = node[Number(segment)];
      else if (isObject(node) && Object.hasOwn(node, segment)) node = node[segment];
      else throw new Error(`Unable to resolve reference path: ${ref}`);
    }
    return node;
  }
}

/** Inlines a reference's target into the node that referred to it (with the node's other keywords). */
function merge(target: unknown, siblings: SchemaObject): unknown {
  const siblingKeys = Object.keys(siblings);
  if (siblingKeys.length === 0) return target;
  if (!isObject(target)) return { allOf: [target], ...siblings };
  const clash = siblingKeys.some((key) => Object.hasOwn(target, key) && !ANNOTATION_KEYWORDS.has(key));
  if (clash) return { allOf: [target, siblings] };
  const out: SchemaObject = { ...target };
  for (const key of siblingKeys) define(out, key, siblings[key]);
  return out;
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `#` or `#/…` (a JSON Pointer fragment); not `#anchor`, not a URI. */
function isLocalPointer(ref: string): boolean {
  return ref === '#' || ref.startsWith('#/');
}

function decodeFragment(ref: string): string {
  try {
    return decodeURIComponent(ref.slice(1));
  } catch {
    return ref.slice(1);
  }
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function escapeSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Sets an own data property, even for `__proto__`. */
function define(target: SchemaObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Orders a bucket of kept definitions as they were in the original document. */
function sortLike(bucket: SchemaObject, original: unknown): SchemaObject {
  if (!isObject(original)) return bucket;
  const out: SchemaObject = {};
  for (const key of Object.keys(original)) if (Object.hasOwn(bucket, key)) define(out, key, bucket[key]);
  return out;
}

/** A deep copy of JSON data (annotation and unknown keyword values), so the output shares nothing with the input. */
function structuredCloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(structuredCloneJson);
  const out: SchemaObject = {};
  for (const [key, item] of Object.entries(value)) define(out, key, structuredCloneJson(item));
  return out;
}
