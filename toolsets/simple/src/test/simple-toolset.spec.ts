import { imageURLPart, textPart, toolError, toolOk, type JsonValue, type ToolResult } from '@kosong/core';
import { parseToolArguments } from '@kosong/core/toolset-kit';
import { expect } from 'chai';
import fc from 'fast-check';
import { z } from 'zod';
import {
  defineJsonSchemaTool,
  defineTool,
  SimpleToolset,
  ToolDefinitionError,
  ToolNameConflictError,
  UnknownToolError,
  type CallableTool,
} from '../index.js';
import { call, contextFor, run } from './support.js';

const plus = defineTool({
  name: 'plus',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => toolOk({ output: String(a + b) }),
});
const compare = defineTool({
  name: 'compare',
  description: 'Compares two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => (a < b ? 'less' : a > b ? 'greater' : 'equal'),
});
const raise = defineTool({
  name: 'raise',
  description: 'Always fails.',
  parameters: z.object({}),
  execute: () => {
    throw new Error('test exception');
  },
});
const error = defineTool({
  name: 'error',
  description: 'Returns an error.',
  parameters: z.object({}),
  execute: () => toolError({ message: 'test error', brief: 'Error' }),
});

/** A tool that records what execute received. */
function recorder(name: string, parameters: z.ZodType, seen: unknown[]): CallableTool {
  return defineTool({
    name,
    description: '',
    parameters,
    execute: (args) => {
      seen.push(args);
      return 'ok';
    },
  });
}

describe('SimpleToolset', () => {
  describe('registry', () => {
    it('keeps tools in insertion order, as plain definitions (constructor, add, remove, has, get)', () => {
      const toolset = new SimpleToolset([plus, compare]);
      toolset.add(raise).add(error);
      expect(toolset.tools.map((tool) => tool.name)).to.deep.equal(['plus', 'compare', 'raise', 'error']);
      expect(toolset.tools[0]).to.deep.equal({ name: 'plus', description: 'Adds two numbers.', parameters: plus.parameters });
      expect(Object.keys(toolset.tools[0]!)).to.deep.equal(['name', 'description', 'parameters']);
      expect(toolset.has('raise')).to.equal(true);
      expect(toolset.get('raise')).to.equal(raise);
      toolset.remove('raise');
      expect(toolset.has('raise')).to.equal(false);
      expect(toolset.get('raise')).to.equal(undefined);
      expect(toolset.tools.map((tool) => tool.name)).to.deep.equal(['plus', 'compare', 'error']);
    });

    it('gives the same frozen tools array until the tools change', () => {
      const toolset = new SimpleToolset([plus]);
      const first = toolset.tools;
      expect(toolset.tools).to.equal(first);
      expect(Object.isFrozen(first)).to.equal(true);
      toolset.add(compare);
      expect(toolset.tools).to.not.equal(first);
      expect(first.map((tool) => tool.name)).to.deep.equal(['plus']);
    });

    it('refuses a second tool of the same name, unless asked to replace it (in place)', () => {
      const toolset = new SimpleToolset([plus, compare], { name: 'math' });
      const otherPlus = defineTool({ name: 'plus', description: 'Another plus.', parameters: z.object({}), execute: () => 'x' });
      expect(() => toolset.add(otherPlus))
        .to.throw(ToolNameConflictError, 'Tool `plus` is provided by both the toolset "math" and the tool being added')
        .with.property('tool', 'plus');
      expect(toolset.get('plus')).to.equal(plus);
      toolset.add(otherPlus, { replace: true });
      expect(toolset.tools.map((tool) => tool.description)).to.deep.equal(['Another plus.', 'Compares two numbers.']);
      expect(() => new SimpleToolset([plus, plus])).to.throw(ToolNameConflictError);
    });

    it('removing a missing tool throws, naming it and the tools there are', () => {
      const toolset = new SimpleToolset([plus]);
      expect(() => toolset.remove('minus'))
        .to.throw(UnknownToolError, 'Tool `minus` not found in the toolset (tools: `plus`)')
        .with.property('tool', 'minus');
      expect(() => new SimpleToolset().remove('x')).to.throw(UnknownToolError, 'the toolset is empty');
    });

    it('refuses what is not a CallableTool, and invalid options', () => {
      const bare = { name: 'bare', description: '', parameters: {} };
      expect(() => new SimpleToolset().add(bare as unknown as CallableTool)).to.throw(ToolDefinitionError, /validate\(\) and execute\(\)/);
      expect(() => new SimpleToolset().add(null as unknown as CallableTool)).to.throw(ToolDefinitionError, /not a tool/);
      expect(() => new SimpleToolset([], { maxConcurrency: 0 })).to.throw(ToolDefinitionError, /maxConcurrency/);
      expect(() => new SimpleToolset([], { maxConcurrency: 1.5 })).to.throw(ToolDefinitionError, /maxConcurrency/);
      expect(() => new SimpleToolset([], { timeoutMs: -1 })).to.throw(ToolDefinitionError, /timeoutMs/);
      expect(() => new SimpleToolset([], { maxOutputChars: 0 })).to.throw(ToolDefinitionError, /maxOutputChars/);
    });
  });

  describe('results (kosong test_simple_toolset)', () => {
    it('answers each kind of call with its result, keeping the call ids', async () => {
      const toolset = new SimpleToolset([plus, compare, raise, error]);
      const calls = [
        call('plus', '{"a": 1, "b": 2}', '1'),
        call('compare', '{"a": 1, b: 2}', '2'),
        call('plus', '{"a": 1}', '3'),
        call('raise', null, '4'),
        call('not_found', null, '5'),
        call('error', null, '6'),
      ];
      const results = await Promise.all(calls.map((c) => toolset.handle(c, contextFor(c))));
      expect(results.map((r) => r.toolCallId)).to.deep.equal(['1', '2', '3', '4', '5', '6']);
      const [ok, parse, validate, runtime, notFound, failed] = results.map((r) => r.returnValue);
      expect(ok).to.deep.equal(toolOk({ output: '3' }));
      // The parser's own words vary with the Node version: what is ours is the prefix and that the detail is core's parseToolArguments error.
      const detail = parseToolArguments('{"a": 1, b: 2}');
      expect(detail.ok).to.equal(false);
      expect(parse).to.deep.equal(toolError({ message: `Error parsing JSON arguments: ${(detail as { error: string }).error}`, brief: 'Invalid arguments' }));
      expect(validate).to.deep.equal(
        toolError({ message: 'Error validating JSON arguments: b: Invalid input: expected number, received undefined', brief: 'Invalid arguments' }),
      );
      expect(runtime).to.deep.equal(toolError({ message: 'Error running tool: test exception', brief: 'Tool runtime error' }));
      expect(notFound).to.deep.equal(toolError({ message: 'Tool `not_found` not found', brief: 'Tool `not_found` not found' }));
      expect(failed).to.deep.equal(toolError({ message: 'test error', brief: 'Error' }));
    });

    it('answers unknown tools and bad arguments synchronously, and never runs execute for them', () => {
      const seen: unknown[] = [];
      const toolset = new SimpleToolset([recorder('t', z.object({ a: z.number() }), seen)]);
      for (const [name, args] of [
        ['missing', '{}'],
        ['t', '{'],
        ['t', '{"a":"1"}'],
      ] as const) {
        const c = call(name, args);
        const result = toolset.handle(c, contextFor(c)) as ToolResult;
        expect(result).to.not.be.instanceOf(Promise);
        expect(result.returnValue.isError).to.equal(true);
      }
      expect(seen).to.deep.equal([]);
    });

    it('a string from execute is shorthand for toolOk; a ToolReturnValue passes as it is', async () => {
      const value = toolOk({ output: [textPart('hi'), imageURLPart('https://example.com/a.png')], message: 'm', brief: 'b', extras: { k: 1 } });
      const toolset = new SimpleToolset([
        defineTool({ name: 's', description: '', parameters: z.object({}), execute: () => 'text' }),
        defineTool({ name: 'v', description: '', parameters: z.object({}), execute: async () => value }),
      ]);
      expect((await run(toolset, 's', null)).returnValue).to.deep.equal(toolOk({ output: 'text' }));
      expect((await run(toolset, 'v', null)).returnValue).to.equal(value);
    });

    it('anything else from execute is an invalid return type', async () => {
      const returning = (name: string, value: unknown) =>
        defineTool({ name, description: '', parameters: z.object({}), execute: () => value as string });
      const toolset = new SimpleToolset([
        returning('number', 42),
        returning('undefined', undefined),
        returning('null', null),
        returning('array', ['a']),
        returning('object', { output: 'x' }),
        returning('result', { toolCallId: 'x', returnValue: toolOk({ output: 'x' }) }),
      ]);
      const messages = await Promise.all(['number', 'undefined', 'null', 'array', 'object', 'result'].map(async (name) => (await run(toolset, name, null)).returnValue));
      expect(messages.map((m) => m.message)).to.deep.equal([
        'Invalid return type: number (expected a ToolReturnValue or a string)',
        'Invalid return type: undefined (expected a ToolReturnValue or a string)',
        'Invalid return type: null (expected a ToolReturnValue or a string)',
        'Invalid return type: array (expected a ToolReturnValue or a string)',
        'Invalid return type: object that is not a ToolReturnValue (expected a ToolReturnValue or a string)',
        'Invalid return type: a ToolResult (return its returnValue: a ToolReturnValue, or a string)',
      ]);
      expect(messages.every((m) => m.isError && m.display[0]?.type === 'brief')).to.equal(true);
    });

    it('a tool that throws synchronously, rejects, or throws a non-Error gives "Error running tool"', async () => {
      const toolset = new SimpleToolset([
        defineTool({ name: 'sync', description: '', parameters: z.object({}), execute: () => { throw new TypeError('sync boom'); } }),
        defineTool({ name: 'async', description: '', parameters: z.object({}), execute: () => Promise.reject(new Error('async boom')) }),
        defineTool({ name: 'odd', description: '', parameters: z.object({}), execute: () => { throw { code: 42 }; } }),
      ]);
      let ran = false;
      const probe = new SimpleToolset([defineTool({ name: 'p', description: '', parameters: z.object({}), execute: () => ((ran = true), 'ok') })]);
      const pending = probe.handle(call('p', null), contextFor(call('p', null)));
      expect(ran, 'execute ran inside handle()').to.equal(false); // handle() must not block on the tool's code
      expect((await pending).returnValue.output).to.equal('ok');
      expect(ran).to.equal(true);
      const sync = toolset.handle(call('sync', null), contextFor(call('sync', null)));
      expect(sync).to.be.instanceOf(Promise);
      expect((await sync).returnValue.message).to.equal('Error running tool: sync boom');
      expect((await run(toolset, 'async', null)).returnValue.message).to.equal('Error running tool: async boom');
      expect((await run(toolset, 'odd', null)).returnValue.message).to.equal('Error running tool: {"code":42}');
    });

    it('a custom CallableTool whose validate throws or rejects gives an error result, not a throw', async () => {
      const base = { description: '', parameters: {}, execute: () => 'never' };
      const toolset = new SimpleToolset([
        { ...base, name: 'throws', validate: () => { throw new Error('validator broke'); } },
        { ...base, name: 'rejects', validate: () => Promise.reject(new Error('validator rejected')) },
      ]);
      expect((await run(toolset, 'throws', '{}')).returnValue.message).to.equal('Error running tool: validator broke');
      expect((await run(toolset, 'rejects', '{}')).returnValue.message).to.equal('Error running tool: validator rejected');
    });
  });

  describe('bad arguments', () => {
    const seen: unknown[] = [];
    const toolset = new SimpleToolset([
      recorder('zod', z.object({ a: z.number(), b: z.string().optional() }), seen),
      recorder('strict', z.object({ a: z.number() }).strict(), seen),
      recorder('optional', z.object({ a: z.number().optional() }), seen),
      recorder('nested', z.object({ users: z.array(z.object({ name: z.string(), tags: z.array(z.string()) })), 'odd key': z.number() }), seen),
      defineJsonSchemaTool({
        name: 'ajv',
        description: '',
        parameters: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false },
        execute: (args) => {
          seen.push(args);
          return 'ok';
        },
      }),
    ]);
    beforeEach(() => (seen.length = 0));
    const message = async (name: string, args: string | null) => (await run(toolset, name, args)).returnValue.message;

    it('not JSON: the parser says why, whatever the tool', async () => {
      for (const args of ['{"a": 1,', 'not json', '{a: 1}', "{'a': 1}", '{"a": 1} trailing', '{"a": NaN}']) {
        expect(await message('zod', args), args).to.match(/^Error parsing JSON arguments: \S/);
        expect(await message('ajv', args), args).to.match(/^Error parsing JSON arguments: \S/);
      }
      expect(seen).to.deep.equal([]);
    });

    it('raw control characters inside strings are accepted (as models send them)', async () => {
      expect(await message('zod', '{"a": 1, "b": "line one\nline two\tend"}')).to.equal('');
      expect(seen).to.deep.equal([{ a: 1, b: 'line one\nline two\tend' }]);
    });

    it('wrong types and missing required properties name the path', async () => {
      expect(await message('zod', '{"a": "1"}')).to.equal('Error validating JSON arguments: a: Invalid input: expected number, received string');
      expect(await message('zod', '{"b": 2}')).to.equal(
        'Error validating JSON arguments: a: Invalid input: expected number, received undefined\nb: Invalid input: expected string, received number',
      );
      expect(await message('ajv', '{"a": "1"}')).to.equal('Error validating JSON arguments: a: must be number');
      expect(await message('ajv', '{}')).to.equal('Error validating JSON arguments: a: Missing required property');
      expect(await message('nested', '{"users": [{"name": "a", "tags": []}, {"name": 1, "tags": ["x", 2]}], "odd key": "7"}')).to.equal(
        [
          'Error validating JSON arguments: users[1].name: Invalid input: expected string, received number',
          'users[1].tags[1]: Invalid input: expected string, received number',
          '["odd key"]: Invalid input: expected number, received string',
        ].join('\n'),
      );
      expect(seen).to.deep.equal([]);
    });

    it('extra keys where the schema forbids them (.strict(), additionalProperties: false)', async () => {
      expect(await message('strict', '{"a": 1, "extra": true, "more": 2}')).to.equal('Error validating JSON arguments: extra: Unrecognized key\nmore: Unrecognized key');
      expect(await message('ajv', '{"a": 1, "extra": true}')).to.equal('Error validating JSON arguments: extra: Unrecognized key');
      expect(seen).to.deep.equal([]);
      expect(await message('zod', '{"a": 1, "extra": true}')).to.equal(''); // not strict: stripped
      expect(seen).to.deep.equal([{ a: 1 }]);
    });

    it('non-object arguments when the schema wants an object', async () => {
      for (const [args, received] of [
        ['[1, 2]', 'array'],
        ['"text"', 'string'],
        ['42', 'number'],
        ['true', 'boolean'],
        ['null', 'null'],
      ] as const) {
        expect(await message('zod', args)).to.equal(`Error validating JSON arguments: (root): Invalid input: expected object, received ${received}`);
        expect(await message('ajv', args)).to.equal('Error validating JSON arguments: (root): must be object');
      }
      expect(seen).to.deep.equal([]);
    });

    it('null or empty arguments mean {}: valid for a schema without required properties, else "missing"', async () => {
      expect(await message('optional', null)).to.equal('');
      expect(await message('optional', '')).to.equal('');
      expect(seen).to.deep.equal([{}, {}]);
      expect(await message('zod', null)).to.equal('Error validating JSON arguments: a: Invalid input: expected number, received undefined');
      expect(await message('ajv', '')).to.equal('Error validating JSON arguments: a: Missing required property');
    });

    it('lists at most 20 issues, then says how many more there are', async () => {
      const args = JSON.stringify({ users: Array.from({ length: 30 }, () => ({ name: 1, tags: [] })), 'odd key': 1 });
      const lines = (await message('nested', args)).split('\n');
      expect(lines).to.have.length(21);
      expect(lines[19]).to.equal('users[19].name: Invalid input: expected string, received number');
      expect(lines[20]).to.equal('… and 10 more issues');
    });
  });

  describe('prototype keys', () => {
    const objectAssign = Object.assign;
    afterEach(() => {
      // Whatever happened, Object.prototype and Object must be as they were (repaired here, so that one failure does not spread).
      const polluted = Object.getOwnPropertyNames(Object.prototype).includes('isAdmin');
      delete (Object.prototype as Record<string, unknown>)['isAdmin'];
      const assignReplaced = Object.assign !== objectAssign;
      Object.assign = objectAssign;
      expect(polluted, 'Object.prototype.isAdmin').to.equal(false);
      expect(assignReplaced, 'Object.assign replaced').to.equal(false);
    });

    const evil = '{"a": 1, "__proto__": {"isAdmin": true}, "constructor": {"prototype": {"isAdmin": true}}, "nested": {"__proto__": {"isAdmin": true}}}';

    /** The deep merge found in many code bases (and in old versions of popular libraries): `for…in`, no key checks. */
    function naiveDeepMerge(target: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
      for (const key in source) {
        const value = source[key];
        if (typeof value === 'object' && value !== null) {
          if (!target[key]) target[key] = {};
          naiveDeepMerge(target[key] as Record<string, unknown>, value as Record<string, unknown>);
        } else {
          target[key] = value;
        }
      }
      return target;
    }

    /** What every plain object shares: `Object`, `Object.prototype` and the functions on it, with their own properties. */
    function sharedState(): Map<object, Map<PropertyKey, unknown>> {
      const holders: object[] = [Object, Object.prototype];
      for (const key of Object.getOwnPropertyNames(Object.prototype)) {
        const value = Object.getOwnPropertyDescriptor(Object.prototype, key)?.value as unknown;
        if (typeof value === 'function') holders.push(value);
      }
      return new Map(holders.map((holder) => [holder, new Map(Reflect.ownKeys(holder).map((key) => [key, Object.getOwnPropertyDescriptor(holder, key)?.value]))]));
    }

    /** Deep-merges what the tool got into a fresh object, as a careless tool would; nothing shared may change. */
    function expectMergeHarmless(args: unknown): void {
      const before = sharedState();
      naiveDeepMerge({}, args as Record<string, unknown>);
      const after = sharedState();
      // Repair before failing, so that one failure does not spread to other tests.
      for (const [holder, properties] of after) {
        for (const [key, value] of properties) {
          const old = before.get(holder)!;
          if (!old.has(key)) Reflect.deleteProperty(holder, key);
          else if (old.get(key) !== value) Reflect.set(holder, key, old.get(key));
        }
      }
      expect(after, `a deep merge of ${JSON.stringify(args)} changed a shared object`).to.deep.equal(before);
    }

    function expectClean(args: unknown): void {
      const object = args as Record<string, unknown>;
      expect(object['isAdmin']).to.equal(undefined);
      expect(Object.getPrototypeOf(object)).to.equal(Object.prototype);
      expect(Object.hasOwn(object, '__proto__')).to.equal(false);
      const nested = object['nested'] as Record<string, unknown> | undefined;
      if (nested !== undefined) {
        expect(nested['isAdmin']).to.equal(undefined);
        expect(Object.getPrototypeOf(nested)).to.equal(Object.prototype);
        expect(Object.hasOwn(nested, '__proto__')).to.equal(false);
      }
      // A careless copy of the arguments must not be able to pick a prototype either.
      expect((Object.assign({}, object) as Record<string, unknown>)['isAdmin']).to.equal(undefined);
      expect(Object.hasOwn(object, 'constructor'), 'an object under "constructor" is removed').to.equal(false);
      expectMergeHarmless(object);
    }

    for (const [label, parameters] of [
      ['z.object (strip)', z.object({ a: z.number() })],
      ['z.looseObject', z.looseObject({ a: z.number() })],
      ['z.record', z.record(z.string(), z.unknown())],
      ['z.any() values', z.object({ a: z.number(), nested: z.any() })],
      ['z.json()', z.json()],
    ] as const) {
      it(`zod, ${label}: never reach a prototype`, async () => {
        const seen: unknown[] = [];
        const result = await run(new SimpleToolset([recorder('t', parameters, seen)]), 't', evil);
        expect(result.returnValue.message).to.equal('');
        expect(seen).to.have.length(1);
        expectClean(seen[0]);
      });
    }

    it('zod .strict(): __proto__ and constructor are unrecognized keys', async () => {
      const seen: unknown[] = [];
      const result = await run(new SimpleToolset([recorder('t', z.object({ a: z.number(), nested: z.any() }).strict(), seen)]), 't', evil);
      expect(result.returnValue.message).to.equal('Error validating JSON arguments: __proto__: Unrecognized key\nconstructor: Unrecognized key');
      expect(seen).to.deep.equal([]);
    });

    it('ajv, open schema: never reach a prototype; additionalProperties: false rejects them', async () => {
      const seen: unknown[] = [];
      const open = defineJsonSchemaTool({ name: 'open', description: '', parameters: { type: 'object' }, execute: (args) => (seen.push(args), 'ok') });
      const closed = defineJsonSchemaTool({
        name: 'closed',
        description: '',
        parameters: { type: 'object', properties: { a: { type: 'number' }, nested: {} }, additionalProperties: false },
        execute: (args) => (seen.push(args), 'ok'),
      });
      const toolset = new SimpleToolset([open, closed]);
      expect((await run(toolset, 'open', evil)).returnValue.message).to.equal('');
      expectClean(seen[0]);
      expect((await run(toolset, 'closed', evil)).returnValue.message).to.equal(
        'Error validating JSON arguments: __proto__: Unrecognized key\nconstructor: Unrecognized key',
      );
      expect(seen).to.have.length(1);
    });

    it('a naive for…in deep merge of the arguments cannot reach Object.prototype or Object, through zod or ajv', async () => {
      const seen: unknown[] = [];
      const toolset = new SimpleToolset([
        recorder('zod', z.object({ options: z.any(), list: z.array(z.any()) }), seen),
        defineJsonSchemaTool({ name: 'ajv', description: '', parameters: { type: 'object' }, execute: (args) => (seen.push(args), 'ok') }),
      ]);
      const attacks = [
        '{"options": {"constructor": {"prototype": {"isAdmin": true}}}, "list": []}',
        '{"options": {"constructor": {"assign": 1}}, "list": [{"constructor": {"prototype": {"isAdmin": true}}}]}',
        '{"options": {"a": {"b": {"constructor": {"prototype": {"isAdmin": true}}}}}, "list": [[{"prototype": {"isAdmin": true}}]]}',
      ];
      for (const name of ['zod', 'ajv']) {
        for (const attack of attacks) {
          expect((await run(toolset, name, attack)).returnValue.output, `${name}: ${attack}`).to.equal('ok');
          expectMergeHarmless(seen.pop());
        }
      }
      // A "constructor" or "prototype" that is plain data stays.
      expect((await run(toolset, 'ajv', '{"constructor": "Ada", "prototype": null, "x": {"constructor": 3}}')).returnValue.output).to.equal('ok');
      expect(seen.pop()).to.deep.equal({ constructor: 'Ada', prototype: null, x: { constructor: 3 } });
    });

    it('property: no arguments whatever reach a prototype or make handle throw', async () => {
      const key = fc.constantFrom('__proto__', 'constructor', 'prototype', 'isAdmin', 'toString', 'a');
      const json = fc.letrec<{ value: JsonValue }>((tie) => ({
        value: fc.oneof(
          { depthSize: 'small' },
          fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null)),
          fc.array(tie('value'), { maxLength: 3 }),
          fc.dictionary(key, tie('value'), { maxKeys: 4 }),
        ),
      })).value;
      const seen: unknown[] = [];
      const toolset = new SimpleToolset([
        recorder('zod', z.record(z.string(), z.json()), seen),
        defineJsonSchemaTool({ name: 'ajv', description: '', parameters: {}, execute: (args) => (seen.push(args), 'ok') }),
      ]);
      await fc.assert(
        fc.asyncProperty(json, fc.constantFrom('zod', 'ajv'), async (value, name) => {
          // JSON.stringify drops a __proto__ key made by fast-check's dictionary (it is a real prototype there): write it as text.
          const text = JSON.stringify(value).replace(/"(isAdmin)":/g, '"__proto__":');
          const result = await run(toolset, name, text);
          expect(result.returnValue).to.have.property('isError');
          expect(({} as Record<string, unknown>)['isAdmin']).to.equal(undefined);
          for (const args of seen.splice(0)) {
            if (typeof args === 'object' && args !== null && !Array.isArray(args)) expectMergeHarmless(args);
            const stack = [args];
            while (stack.length > 0) {
              const node = stack.pop();
              if (typeof node !== 'object' || node === null) continue;
              expect(Object.hasOwn(node, '__proto__')).to.equal(false);
              expect([Object.prototype, Array.prototype]).to.include(Object.getPrototypeOf(node));
              stack.push(...Object.values(node));
            }
          }
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('hostile arguments: validation errors, never a throw', () => {
    const nest = (depth: number): string => `${'{"child":'.repeat(depth)}{}${'}'.repeat(depth)}`;

    it('10 MB of invalid escapes after an open string: a parse error result from handle, not a RangeError', async () => {
      const toolset = new SimpleToolset([defineTool({ name: 't', description: '', parameters: z.object({ s: z.string() }), execute: () => 'never' })]);
      const raw = `{"s":"${'\\a'.repeat(5 * 1024 * 1024)}`;
      const c = call('t', raw);
      let returned: ToolResult | Promise<ToolResult> | undefined;
      expect(() => (returned = toolset.handle(c, contextFor(c)))).not.to.throw();
      const result = await returned!;
      expect(result.returnValue.isError).to.equal(true);
      expect(result.returnValue.message).to.match(/^Error parsing JSON arguments: \S/);
    });

    it('100k-deep arguments for a recursive schema (zod, zod async, ajv): a validation error, not a tool runtime error', async () => {
      interface TreeNode {
        child?: TreeNode | undefined;
      }
      const zodNode: z.ZodType<TreeNode> = z.lazy(() => z.object({ child: zodNode.optional() }));
      const seen: unknown[] = [];
      const toolset = new SimpleToolset([
        recorder('zod', zodNode, seen),
        recorder('zodAsync', zodNode.refine(async () => true), seen),
        defineJsonSchemaTool({
          name: 'ajv',
          description: '',
          parameters: { type: 'object', properties: { child: { $ref: '#' } } },
          execute: (args) => (seen.push(args), 'ok'),
        }),
      ]);
      for (const name of ['zod', 'zodAsync', 'ajv']) {
        const deep = await run(toolset, name, nest(100_000));
        expect(deep.returnValue, name).to.deep.equal(
          toolError({ message: 'Error validating JSON arguments: (root): nested too deeply to validate', brief: 'Invalid arguments' }),
        );
        // Moderately deep arguments still pass.
        expect((await run(toolset, name, nest(50))).returnValue.output, name).to.equal('ok');
      }
      expect(seen).to.have.length(3);
    });

    it('a stack overflow inside execute is still the tool\'s own runtime error', async () => {
      const recurse = (n: number): number => (n <= 0 ? 0 : 1 + recurse(n - 1));
      const toolset = new SimpleToolset([defineTool({ name: 't', description: '', parameters: z.object({}), execute: () => String(recurse(1e9)) })]);
      expect((await run(toolset, 't', '{}')).returnValue.message).to.match(/^Error running tool: /);
    });
  });

  describe('huge payloads (10 MB)', () => {
    const tenMegabytes = 10 * 1024 * 1024;

    it('a 10 MB string argument reaches the tool, through zod and through ajv', async () => {
      const lengths: number[] = [];
      const toolset = new SimpleToolset([
        defineTool({ name: 'zod', description: '', parameters: z.object({ content: z.string() }), execute: ({ content }) => (lengths.push(content.length), 'ok') }),
        defineJsonSchemaTool<{ content: string }>({
          name: 'ajv',
          description: '',
          parameters: { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] },
          execute: ({ content }) => (lengths.push(content.length), 'ok'),
        }),
      ]);
      const args = JSON.stringify({ content: 'x'.repeat(tenMegabytes) });
      expect((await run(toolset, 'zod', args)).returnValue.output).to.equal('ok');
      expect((await run(toolset, 'ajv', args)).returnValue.output).to.equal('ok');
      expect(lengths).to.deep.equal([tenMegabytes, tenMegabytes]);
    });

    it('a 10 MB text that is not JSON: a short parse error', async () => {
      const toolset = new SimpleToolset([defineTool({ name: 't', description: '', parameters: z.object({ content: z.string() }), execute: () => 'never' })]);
      const broken = await run(toolset, 't', `{"content": "${'x'.repeat(tenMegabytes)}", oops}`);
      expect(broken.returnValue.message).to.match(/^Error parsing JSON arguments: /);
      expect(broken.returnValue.message.length).to.be.lessThan(1000);
    });

    it('many small values and deep nesting (no stack overflow), many issues (capped list)', async () => {
      const toolset = new SimpleToolset([
        defineTool({ name: 'sum', description: '', parameters: z.object({ values: z.array(z.number()) }), execute: ({ values }) => String(values.length) }),
        defineJsonSchemaTool({ name: 'deep', description: '', parameters: {}, execute: () => 'deep ok' }),
      ]);
      const count = 500_000;
      expect((await run(toolset, 'sum', `{"values": [${'1,'.repeat(count - 1)}1]}`)).returnValue.output).to.equal(String(count));
      const depth = 100_000;
      expect((await run(toolset, 'deep', `${'['.repeat(depth)}${'{"__proto__":'.repeat(10)}1${'}'.repeat(10)}${']'.repeat(depth)}`)).returnValue.output).to.equal('deep ok');
      const wrong = await run(toolset, 'sum', `{"values": [${'"x",'.repeat(20_000)}"x"]}`);
      expect(wrong.returnValue.message.split('\n')).to.have.length(21);
      expect(wrong.returnValue.message).to.match(/… and 19981 more issues$/);
    });
  });
});
