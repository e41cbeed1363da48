import { toolOk, type JsonSchema } from '@kosong/core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { z } from 'zod';
import { defineTool, SimpleToolset, ToolDefinitionError } from '../index.js';
import { runJson } from './support.js';

/** Every `$ref` and `$defs` in a schema, with its path, and whether any `title` keyword is there. */
function scan(schema: unknown, path = '#', found: { refs: string[]; defs: string[]; titles: string[] } = { refs: [], defs: [], titles: [] }) {
  if (Array.isArray(schema)) schema.forEach((item, index) => scan(item, `${path}/${index}`, found));
  else if (typeof schema === 'object' && schema !== null) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref') found.refs.push(`${path}: ${String(value)}`);
      if (key === '$defs' || key === 'definitions') found.defs.push(...Object.keys(value as object));
      // `title` under `properties` is a property name, not the keyword.
      if (key === 'title' && !path.endsWith('/properties')) found.titles.push(path);
      scan(value, `${path}/${key}`, found);
    }
  }
  return found;
}

const ajv = new Ajv2020({ strict: false, validateFormats: false });

/** A validator for a generated schema (which must itself be a valid draft 2020-12 schema). */
function validatorFor(schema: JsonSchema) {
  expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).to.equal(true);
  const validate = ajv.compile(schema);
  ajv.removeSchema(schema);
  return validate;
}

const noop = (): string => 'ok';

describe('defineTool (zod 4)', () => {
  describe('the JSON Schema the model sees', () => {
    it('matches the original kosong for CallableTool2 (spec §5.6): descriptions, defaults, required, no titles', () => {
      const tool = defineTool({
        name: 'test',
        description: 'A test tool',
        parameters: z
          .object({
            a: z.int().describe('The first argument'),
            b: z.int().default(0).describe('The second argument'),
            '-c': z.string().default('').describe('The third argument'),
          })
          .meta({ title: 'TestParams' }),
        execute: noop,
      });
      expect(tool.parameters).to.deep.equal({
        type: 'object',
        properties: {
          a: { type: 'integer', description: 'The first argument' },
          b: { type: 'integer', description: 'The second argument', default: 0 },
          '-c': { type: 'string', description: 'The third argument', default: '' },
        },
        required: ['a'],
      });
    });

    it('describes a representative schema: optional, nullable, enums, bounds, nested objects, arrays, formats', () => {
      const tool = defineTool({
        name: 'search',
        description: 'Searches',
        parameters: z
          .object({
            query: z.string().min(1).describe('What to look for'),
            mode: z.enum(['fast', 'thorough']).default('fast').describe('How hard to look'),
            limit: z.int().min(1).max(100).optional(),
            since: z.iso.date().optional(),
            cursor: z.string().nullable(),
            filters: z
              .object({
                title: z.string().meta({ title: 'Dropped', description: 'A property named title' }),
                tags: z.array(z.string()).max(5),
              })
              .strict(),
          })
          .describe('Search parameters'),
        execute: noop,
      });
      expect(tool.parameters).to.deep.equal({
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, description: 'What to look for' },
          mode: { type: 'string', enum: ['fast', 'thorough'], default: 'fast', description: 'How hard to look' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          since: { type: 'string', format: 'date', pattern: (tool.parameters as { properties: { since: { pattern: string } } }).properties.since.pattern },
          cursor: { type: ['string', 'null'] },
          filters: {
            type: 'object',
            properties: {
              title: { type: 'string', description: 'A property named title' },
              tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
            },
            required: ['title', 'tags'],
            additionalProperties: false,
          },
        },
        required: ['query', 'cursor', 'filters'],
        description: 'Search parameters',
      });
      expect(tool.parameters).to.not.have.property('$schema');
      expect(scan(tool.parameters).titles).to.deep.equal([]);
      validatorFor(tool.parameters);
    });

    it('inlines a schema reused without recursion, also one registered with an id (no $ref, no $defs)', () => {
      const Address = z.object({ city: z.string().describe('City') });
      const Registered = z.object({ street: z.string() }).meta({ id: 'RegisteredAddress', title: 'Street address' });
      const tool = defineTool({
        name: 'ship',
        description: '',
        parameters: z.object({ from: Address, to: Address, billing: Registered.describe('Where the bill goes'), shipping: Registered }),
        execute: noop,
      });
      expect(scan(tool.parameters)).to.deep.equal({ refs: [], defs: [], titles: [] });
      const properties = (tool.parameters as { properties: Record<string, unknown> }).properties;
      expect(properties['from']).to.deep.equal({ type: 'object', properties: { city: { type: 'string', description: 'City' } }, required: ['city'] });
      expect(properties['to']).to.deep.equal(properties['from']);
      expect(properties['billing']).to.deep.equal({
        type: 'object',
        properties: { street: { type: 'string' } },
        required: ['street'],
        description: 'Where the bill goes',
      });
      expect(properties['shipping']).to.deep.equal({ type: 'object', properties: { street: { type: 'string' } }, required: ['street'] });
    });

    it('keeps a $ref only where the schema is recursive: the root refers to itself as #', () => {
      const Category: z.ZodType<{ name: string; subcategories: unknown[] }> = z.object({
        name: z.string(),
        get subcategories() {
          return z.array(Category);
        },
      });
      const tool = defineTool({ name: 'categorise', description: '', parameters: Category, execute: noop });
      expect(tool.parameters).to.deep.equal({
        type: 'object',
        properties: { name: { type: 'string' }, subcategories: { type: 'array', items: { $ref: '#' } } },
        required: ['name', 'subcategories'],
      });
      const validate = validatorFor(tool.parameters);
      expect(validate({ name: 'a', subcategories: [{ name: 'b', subcategories: [] }] })).to.equal(true);
      expect(validate({ name: 'a', subcategories: [{ name: 'b', subcategories: [{ name: 1, subcategories: [] }] }] })).to.equal(false);
    });

    it('keeps a recursive definition (and only it) under $defs when it is nested; the rest is inlined', () => {
      interface Node {
        label: string;
        children?: Node[] | undefined;
      }
      const TreeNode: z.ZodType<Node> = z.object({
        label: z.string(),
        get children() {
          return z.array(TreeNode).optional();
        },
      });
      const Meta = z.object({ author: z.string() }).meta({ id: 'Meta' });
      const tool = defineTool({
        name: 'tree',
        description: '',
        parameters: z.object({ root: TreeNode, spare: TreeNode.optional(), meta: Meta, meta2: Meta }),
        execute: noop,
      });
      const found = scan(tool.parameters);
      expect(found.defs).to.have.length(1);
      const [def] = found.defs;
      expect(found.refs.sort()).to.deep.equal(
        [`#/properties/root: #/$defs/${def}`, `#/properties/spare: #/$defs/${def}`, `#/$defs/${def}/properties/children/items: #/$defs/${def}`].sort(),
      );
      const properties = (tool.parameters as { properties: Record<string, unknown> }).properties;
      expect(properties['meta']).to.deep.equal({ type: 'object', properties: { author: { type: 'string' } }, required: ['author'] });
      const validate = validatorFor(tool.parameters);
      const meta = { author: 'x' };
      expect(validate({ root: { label: 'a', children: [{ label: 'b', children: [{ label: 'c' }] }] }, meta, meta2: meta })).to.equal(true);
      expect(validate({ root: { label: 'a', children: [{ label: 'b', children: [{ label: 3 }] }] }, meta, meta2: meta })).to.equal(false);
    });

    it('terminates on mutual recursion, with a valid schema', () => {
      interface A {
        b?: B | undefined;
      }
      interface B {
        a?: A | undefined;
        n: number;
      }
      const SchemaA: z.ZodType<A> = z.object({
        get b() {
          return SchemaB.optional();
        },
      });
      const SchemaB: z.ZodType<B> = z.object({
        get a() {
          return SchemaA.optional();
        },
        n: z.number(),
      });
      const tool = defineTool({ name: 'mutual', description: '', parameters: z.object({ a: SchemaA, b: SchemaB }), execute: noop });
      const validate = validatorFor(tool.parameters);
      expect(validate({ a: { b: { n: 1, a: { b: { n: 2 } } } }, b: { n: 3 } })).to.equal(true);
      expect(validate({ a: { b: { n: 1, a: { b: { n: 'deep' } } } }, b: { n: 3 } })).to.equal(false);
    });

    it('is frozen: what the model was told cannot drift from what is validated', () => {
      const tool = defineTool({ name: 't', description: '', parameters: z.object({ a: z.string() }), execute: noop });
      expect(Object.isFrozen(tool)).to.equal(true);
      expect(Object.isFrozen(tool.parameters)).to.equal(true);
      expect(Object.isFrozen((tool.parameters as { properties: object }).properties)).to.equal(true);
    });
  });

  describe('definition errors', () => {
    it('rejects a schema with no JSON Schema equivalent, naming the tool', () => {
      expect(() => defineTool({ name: 'when', description: '', parameters: z.object({ at: z.date() }), execute: noop }))
        .to.throw(ToolDefinitionError, /^Tool `when`: parameters cannot be converted to JSON Schema: Date cannot be represented/)
        .with.property('tool', 'when');
    });

    it('rejects a missing name, a non-string description, a JSON Schema instead of zod, and bad limits', () => {
      const parameters = z.object({});
      expect(() => defineTool({ name: '', description: '', parameters, execute: noop })).to.throw(ToolDefinitionError, /non-empty string/);
      expect(() => defineTool({ name: 'x', description: 5 as unknown as string, parameters, execute: noop })).to.throw(ToolDefinitionError, /description/);
      expect(() => defineTool({ name: 'x', description: '', parameters: { type: 'object' } as unknown as typeof parameters, execute: noop })).to.throw(
        ToolDefinitionError,
        /defineJsonSchemaTool/,
      );
      expect(() => defineTool({ name: 'x', description: '', parameters, timeoutMs: 0, execute: noop })).to.throw(ToolDefinitionError, /timeoutMs/);
      expect(() => defineTool({ name: 'x', description: '', parameters, timeoutMs: Number.NaN, execute: noop })).to.throw(ToolDefinitionError, /timeoutMs/);
      expect(() => defineTool({ name: 'x', description: '', parameters, maxOutputChars: 1.5, execute: noop })).to.throw(ToolDefinitionError, /maxOutputChars/);
      expect(ToolDefinitionError.isInstance(new ToolDefinitionError('x', 'y'))).to.equal(true);
      expect(ToolDefinitionError.isInstance(new Error('x'))).to.equal(false);
    });
  });

  describe('arguments', () => {
    it('execute gets the parsed value: defaults applied, unknown keys stripped, transforms run', async () => {
      const seen: unknown[] = [];
      const tool = defineTool({
        name: 'parse',
        description: '',
        parameters: z.object({ n: z.number().default(7), word: z.string().transform((s) => s.toUpperCase()) }),
        execute: (args) => {
          seen.push(args);
          const upper: string = args.word; // typed as the output
          return upper;
        },
      });
      const result = await runJson(new SimpleToolset([tool]), 'parse', { word: 'hi', extra: true });
      expect(result.returnValue).to.deep.equal(toolOk({ output: 'HI' }));
      expect(seen).to.deep.equal([{ n: 7, word: 'HI' }]);
    });

    it('async refinements work (validation then runs asynchronously)', async () => {
      const tool = defineTool({
        name: 'async',
        description: '',
        parameters: z.object({ user: z.string().refine(async (name) => name !== 'root', 'Unknown user') }),
        execute: ({ user }) => `hello ${user}`,
      });
      const toolset = new SimpleToolset([tool]);
      expect((await runJson(toolset, 'async', { user: 'ada' })).returnValue.output).to.equal('hello ada');
      expect((await runJson(toolset, 'async', { user: 'root' })).returnValue.message).to.equal('Error validating JSON arguments: user: Unknown user');
    });

    it('a refinement that throws is a runtime error, not a crash', async () => {
      const tool = defineTool({
        name: 'fragile',
        description: '',
        parameters: z.object({ a: z.string().refine(() => {
          throw new Error('refinement exploded');
        }) }),
        execute: noop,
      });
      const result = await runJson(new SimpleToolset([tool]), 'fragile', { a: 'x' });
      expect(result.returnValue.message).to.equal('Error running tool: refinement exploded');
    });

    it('a union failure says what each option wanted', async () => {
      const tool = defineTool({
        name: 'u',
        description: '',
        parameters: z.object({ target: z.union([z.string(), z.object({ id: z.number() })]) }),
        execute: noop,
      });
      const result = await runJson(new SimpleToolset([tool]), 'u', { target: { id: 'seven' } });
      expect(result.returnValue.message).to.equal(
        'Error validating JSON arguments: target: Invalid input (no option matched: Invalid input: expected string, received object | id: Invalid input: expected number, received string)',
      );
    });
  });
});
