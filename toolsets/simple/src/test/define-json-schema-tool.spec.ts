import type { JsonSchema, JsonValue } from '@kosong/core';
import { expect } from 'chai';
import { z } from 'zod';
import { defineJsonSchemaTool, SimpleToolset, ToolDefinitionError } from '../index.js';
import { run, runJson } from './support.js';

const noop = (): string => 'ok';

function toolsetWith(parameters: JsonSchema, seen: unknown[] = []): SimpleToolset {
  return new SimpleToolset([
    defineJsonSchemaTool({
      name: 'tool',
      description: 'A tool',
      parameters,
      execute: (args) => {
        seen.push(args);
        return 'ok';
      },
    }),
  ]);
}

const orderSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer', description: 'Order id' },
    status: { enum: ['open', 'closed'] },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } },
    'odd key': { type: 'boolean' },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  required: ['id'],
  additionalProperties: false,
} as const;

describe('defineJsonSchemaTool (ajv, draft 2020-12)', () => {
  it('tells the model the schema as given and hands execute the arguments as sent', async () => {
    const seen: unknown[] = [];
    const toolset = toolsetWith(orderSchema, seen);
    expect(toolset.tools).to.deep.equal([{ name: 'tool', description: 'A tool', parameters: orderSchema }]);
    const result = await runJson(toolset, 'tool', { id: 3, status: 'open', items: [{ sku: 'a' }] });
    expect(result.returnValue.output).to.equal('ok');
    expect(seen).to.deep.equal([{ id: 3, status: 'open', items: [{ sku: 'a' }] }]);
  });

  it('reports every issue, one line each, at the path of the offending value', async () => {
    const seen: unknown[] = [];
    const result = await runJson(toolsetWith(orderSchema, seen), 'tool', {
      status: 'pending',
      items: [{ sku: 'a' }, {}, { sku: 5 }],
      'odd key': 'yes',
      note: 1,
      extra: true,
    });
    expect(result.returnValue.isError).to.equal(true);
    expect(result.returnValue.message.split('\n')).to.deep.equal([
      'Error validating JSON arguments: id: Missing required property',
      'extra: Unrecognized key',
      'status: must be equal to one of the allowed values: "open", "closed"',
      'items[1].sku: Missing required property',
      'items[2].sku: must be string',
      '["odd key"]: must be boolean',
      'note: must be string',
      'note: must be null',
      'note: must match a schema in anyOf',
    ]);
    expect(result.returnValue.display).to.deep.equal([{ type: 'brief', text: 'Invalid arguments' }]);
    expect(seen).to.deep.equal([]);
  });

  it('validates recursive schemas ($ref to the root and to $defs)', async () => {
    const toolset = toolsetWith({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } }, meta: { $ref: '#/$defs/Meta' } },
      required: ['name'],
      $defs: { Meta: { type: 'object', properties: { depth: { type: 'integer' } } } },
    });
    expect((await runJson(toolset, 'tool', { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] })).returnValue.isError).to.equal(false);
    const bad = await runJson(toolset, 'tool', { name: 'a', children: [{ name: 'b', children: [{}] }], meta: { depth: 1.5 } });
    expect(bad.returnValue.message).to.equal('Error validating JSON arguments: children[0].children[0].name: Missing required property\nmeta.depth: must be integer');
  });

  it('rejects an invalid schema at definition, naming the tool and the problem', () => {
    const define = (parameters: unknown) => () => defineJsonSchemaTool({ name: 'broken', description: '', parameters: parameters as JsonSchema, execute: noop });
    expect(define({ type: 'objekt' }))
      .to.throw(ToolDefinitionError, /^Tool `broken`: parameters is not a valid JSON Schema \(draft 2020-12\): type: must be equal to one of the allowed values/)
      .with.property('tool', 'broken');
    expect(define({ type: 'object', properties: 5 })).to.throw(ToolDefinitionError, /properties: must be object/);
    expect(define({ type: 'object', required: 'a' })).to.throw(ToolDefinitionError, /required: must be array/);
    expect(define({ type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } })).to.throw(
      ToolDefinitionError,
      /^Tool `broken`: parameters cannot be compiled: can't resolve reference #\/\$defs\/Missing/,
    );
    expect(define({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).to.throw(ToolDefinitionError, /only draft 2020-12 is supported/);
    expect(define([])).to.throw(ToolDefinitionError, /must be a JSON Schema object/);
    expect(define(null)).to.throw(ToolDefinitionError, /must be a JSON Schema object/);
    expect(define(z.object({}))).to.throw(ToolDefinitionError, /use defineTool/);
  });

  it('accepts {} (any arguments), unknown keywords, and formats as annotations only', async () => {
    expect(() => defineJsonSchemaTool({ name: 'any', description: '', parameters: {}, execute: noop })).to.not.throw();
    const toolset = toolsetWith({ type: 'object', 'x-vendor': { cost: 2 }, properties: { at: { type: 'string', format: 'date-time' } } });
    expect((await runJson(toolset, 'tool', { at: 'not a date' })).returnValue.isError).to.equal(false);
  });

  it('compiles each schema on its own: two tools may share an $id', async () => {
    const a = defineJsonSchemaTool({ name: 'a', description: '', parameters: { $id: 'https://example.com/same.json', type: 'object' }, execute: noop });
    const b = defineJsonSchemaTool({ name: 'b', description: '', parameters: { $id: 'https://example.com/same.json', type: 'string' }, execute: noop });
    const toolset = new SimpleToolset([a, b]);
    expect((await runJson(toolset, 'a', {})).returnValue.isError).to.equal(false);
    expect((await runJson(toolset, 'b', {})).returnValue.message).to.equal('Error validating JSON arguments: (root): must be string');
    expect((await runJson(toolset, 'b', 'text')).returnValue.isError).to.equal(false);
  });

  it('works on a frozen copy: changing the original schema later changes nothing', async () => {
    const parameters = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    const toolset = toolsetWith(parameters);
    (parameters.properties.a as { type: string }).type = 'string';
    parameters.required.push('b');
    expect(toolset.tools[0]!.parameters).to.deep.equal({ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] });
    expect(Object.isFrozen(toolset.tools[0]!.parameters)).to.equal(true);
    expect((await runJson(toolset, 'tool', { a: 1 })).returnValue.isError).to.equal(false);
  });

  it('types execute with the given Args', async () => {
    const tool = defineJsonSchemaTool<{ path: string; lines?: number }>({
      name: 'read',
      description: '',
      parameters: { type: 'object', properties: { path: { type: 'string' }, lines: { type: 'integer' } }, required: ['path'] },
      execute: ({ path, lines }) => `${path}:${lines ?? 'all'}`,
    });
    expect((await run(new SimpleToolset([tool]), 'read', '{"path":"a.txt"}')).returnValue.output).to.equal('a.txt:all');
    const untyped = defineJsonSchemaTool({ name: 'echo', description: '', parameters: {}, execute: (args: JsonValue) => JSON.stringify(args) });
    expect((await run(new SimpleToolset([untyped]), 'echo', '[1,"x",null]')).returnValue.output).to.equal('[1,"x",null]');
  });
});
