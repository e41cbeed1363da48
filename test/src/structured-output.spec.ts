/**
 * Structured output in the runtime (generate, step, runner.step, the agent loop), with the offline
 * mock provider: how a schema becomes the provider's output format, and how the answer is parsed,
 * validated and typed — attacked with text that is no JSON, cut off, wrong, huge or deep.
 */
import {
  Agent,
  InvalidOutputSchemaError,
  Kernel,
  StructuredOutputError,
  definePlugin,
  emptyToolset,
  generate,
  step,
  structuredOutput,
  textPart,
  thinkPart,
  toolCall,
  tokenUsage,
  type HookErrorReport,
  type JsonSchema,
  type Message,
  type StandardSchema,
  type StepEndEvent,
  type StepStartEvent,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { z } from 'zod';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];
const base = { systemPrompt: '', toolset: emptyToolset, history };

/** A provider answering `text` in chunks of `size` characters. */
function answering(text: string, options: { finishReason?: 'stop' | 'length'; size?: number } = {}): MockChatProvider {
  const size = options.size ?? 7;
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return new MockChatProvider(chunks.map(textPart), { finishReason: options.finishReason ?? 'stop', usage: tokenUsage({ inputOther: 5, output: 9 }) });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const Weather = z.object({ city: z.string(), celsius: z.number() });

describe('structured output', () => {
  describe('a zod schema', () => {
    it('asks the provider for its JSON Schema and gives the parsed, validated, typed output', async () => {
      const provider = answering('{"city": "Paris", "celsius": 21.5}');
      const result = await step({ ...base, provider, output: Weather });
      const output: { city: string; celsius: number } | undefined = result.output; // typed from the schema
      expect(output).to.deep.equal({ city: 'Paris', celsius: 21.5 });
      const sent = provider.requests.at(-1)!.output!;
      expect(sent).to.deep.equal({
        type: 'json_schema',
        name: 'output',
        description: undefined,
        schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] },
      });
      expect(Object.isFrozen(sent.schema)).to.equal(true);
    });

    it('applies transforms: the output is the schema’s output, the model is shown its input', async () => {
      const Event = z.object({ when: z.string().transform((text) => new Date(text)), count: z.string().transform(Number).pipe(z.number().int()) });
      const provider = answering('{"when": "2020-02-03T04:05:06Z", "count": "42"}');
      const result = await generate({ provider, systemPrompt: '', history, output: Event });
      const output: { when: Date; count: number } | undefined = result.output;
      expect(output!.when).to.be.instanceOf(Date);
      expect(output!.when.toISOString()).to.equal('2020-02-03T04:05:06.000Z');
      expect(output!.count).to.equal(42);
      const schema = provider.requests.at(-1)!.output!.schema as { properties: Record<string, unknown> };
      expect(schema.properties['when']).to.deep.equal({ type: 'string' });
      expect(schema.properties['count']).to.deep.equal({ type: 'string' });
    });

    it('a transform that throws is an invalid output, not a crash', async () => {
      const Exploding = z.object({ a: z.string().transform(() => {
        throw new Error('boom in transform');
      }) });
      const error = await rejection(step({ ...base, provider: answering('{"a": "x"}'), output: Exploding }));
      expect(StructuredOutputError.isInstance(error), String(error)).to.equal(true);
      expect(error).to.include({ failure: 'invalid' });
      expect((error as StructuredOutputError).issues[0]!.message).to.contain('boom in transform');
    });

    it('names and describes the schema with structuredOutput()', async () => {
      const provider = answering('{"city": "Oslo", "celsius": -3}');
      const result = await step({ ...base, provider, output: structuredOutput(Weather, { name: 'weather', description: 'The weather in a city.' }) });
      expect(result.output?.city).to.equal('Oslo');
      expect(provider.requests.at(-1)!.output).to.include({ name: 'weather', description: 'The weather in a city.' });
    });

    it('a schema whose root is no object is asked for as {"value": …} and unwrapped', async () => {
      const provider = answering('{"value": ["a", "b"]}');
      const result = await step({ ...base, provider, output: z.array(z.string()) });
      const output: string[] | undefined = result.output;
      expect(output).to.deep.equal(['a', 'b']);
      expect(provider.requests.at(-1)!.output!.schema).to.deep.equal({
        type: 'object',
        properties: { value: { type: 'array', items: { type: 'string' } } },
        required: ['value'],
        additionalProperties: false,
      });
    });

    it('a recursive schema: an object root keeps its self-references as they are', async () => {
      type Tree = { name: string; children: Tree[] };
      const TreeSchema: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(TreeSchema) }));
      const provider = answering('{"name": "root", "children": [{"name": "leaf", "children": []}]}');
      const result = await step({ ...base, provider, output: TreeSchema });
      expect(result.output?.children[0]?.name).to.equal('leaf');
      expect(JSON.stringify(provider.requests.at(-1)!.output!.schema)).to.contain('"$ref":"#"');
    });

    it('a recursive schema with an array root: wrapped, its self-references pointed at the value (a valid schema the answer matches)', async () => {
      type Nested = Nested[];
      const NestedSchema: z.ZodType<Nested> = z.array(z.lazy(() => NestedSchema));
      const answer = '{"value": [[], [[]]]}';
      const provider = answering(answer);
      const result = await step({ ...base, provider, output: NestedSchema });
      expect(result.output).to.deep.equal([[], [[]]]);
      const sent = provider.requests.at(-1)!.output!.schema;
      expect(JSON.stringify(sent)).to.contain('"$ref":"#/properties/value"');
      const validate = new Ajv2020({ strict: false }).compile(JSON.parse(JSON.stringify(sent)) as object);
      expect(validate(JSON.parse(answer)), JSON.stringify(validate.errors)).to.equal(true);
      expect(validate({ value: [[1]] })).to.equal(false);
    });

    it('a zod schema without a JSON Schema equivalent is an InvalidOutputSchemaError before any request', async () => {
      const provider = answering('{}');
      const error = await rejection(step({ ...base, provider, output: z.object({ at: z.date() }) }));
      expect(InvalidOutputSchemaError.isInstance(error), String(error)).to.equal(true);
      expect(provider.requests).to.have.length(0);
    });
  });

  describe('a JSON Schema', () => {
    const schema: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1 } },
      required: ['tags'],
      $defs: { tag: { type: 'string', minLength: 2 } },
    };

    it('is validated with ajv; the provider gets it dereferenced, without $schema', async () => {
      const provider = answering('{"tags": ["ab", "cd"]}');
      const result = await step({ ...base, provider, output: schema });
      expect(result.output).to.deep.equal({ tags: ['ab', 'cd'] });
      expect(provider.requests.at(-1)!.output!.schema).to.deep.equal({
        type: 'object',
        properties: { tags: { type: 'array', items: { type: 'string', minLength: 2 }, minItems: 1 } },
        required: ['tags'],
      });
    });

    it('a value failing it is a StructuredOutputError with every issue, its path and the raw text', async () => {
      const text = '{"tags": ["a", 7], "extra": true}';
      const error = (await rejection(step({ ...base, provider: answering(text), output: schema }))) as StructuredOutputError;
      expect(StructuredOutputError.isInstance(error)).to.equal(true);
      expect(error.failure).to.equal('invalid');
      expect(error.text).to.equal(text);
      expect(error.issues.map((issue) => issue.path)).to.deep.equal([['tags', 0], ['tags', 1]]);
      expect(error.message).to.contain('tags[0]').and.contain('tags[1]');
      expect(error.response.content).to.deep.equal([textPart(text)]);
      expect(error.usage).to.deep.include({ output: 9 });
    });

    it('an invalid JSON Schema is an InvalidOutputSchemaError', async () => {
      const error = await rejection(step({ ...base, provider: answering('{}'), output: { type: 'object', properties: { a: { type: 'no-such-type' } } } }));
      expect(InvalidOutputSchemaError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.contain('draft 2020-12');
    });

    it('a value that is no schema, or a bad name, is an InvalidOutputSchemaError', async () => {
      for (const output of [42, 'object', null, [1]] as unknown[]) {
        const error = await rejection(step({ ...base, provider: answering('{}'), output: output as JsonSchema }));
        expect(InvalidOutputSchemaError.isInstance(error), String(output)).to.equal(true);
      }
      const badName = await rejection(step({ ...base, provider: answering('{}'), output: structuredOutput(Weather, { name: 'has spaces' }) }));
      expect(InvalidOutputSchemaError.isInstance(badName)).to.equal(true);
    });
  });

  describe('answers that are not what was asked for', () => {
    it('text that is not JSON: not_json, quoting the start of the text, carrying all of it', async () => {
      const text = `Sure! Here is the weather: ${'sunny '.repeat(100)}`;
      const error = (await rejection(step({ ...base, provider: answering(text), output: Weather }))) as StructuredOutputError;
      expect(error.failure).to.equal('not_json');
      expect(error.text).to.equal(text);
      expect(error.message.length).to.be.below(400);
    });

    it('JSON cut off by the token budget (finish reason length): truncated', async () => {
      const error = (await rejection(step({ ...base, provider: answering('{"city": "Par', { finishReason: 'length' }), output: Weather }))) as StructuredOutputError;
      expect(error.failure).to.equal('truncated');
      expect(error.finishReason).to.equal('length');
      expect(error.message).to.contain('cut off');
    });

    it('only thinking and empty text: the empty-response error of the runtime; whitespace only: empty', async () => {
      const onlyThink = new MockChatProvider([thinkPart('hmm')]);
      const thinking = await rejection(step({ ...base, provider: onlyThink, output: Weather }));
      expect((thinking as Error).name).to.equal('APIEmptyResponseError');
      const blank = (await rejection(step({ ...base, provider: new MockChatProvider([textPart('   \n ')]), output: Weather }))) as StructuredOutputError;
      expect(StructuredOutputError.isInstance(blank)).to.equal(true);
      expect(blank.failure).to.equal('empty');
    });

    it('thinking is left out, and JSON in one Markdown code fence is taken from inside it', async () => {
      const provider = new MockChatProvider([thinkPart('{"not": "this"}'), textPart('```json\n{"city": "Rome", "celsius": 30}\n```')]);
      const result = await step({ ...base, provider, output: Weather });
      expect(result.output).to.deep.equal({ city: 'Rome', celsius: 30 });
    });

    it('a wrapped output without "value" is invalid', async () => {
      const error = (await rejection(step({ ...base, provider: answering('["a"]'), output: z.array(z.string()) }))) as StructuredOutputError;
      expect(error.failure).to.equal('invalid');
    });

    it('a huge output (5 MB in 64 KiB deltas) is parsed and validated', async () => {
      const items = Array.from({ length: 50_000 }, (_, i) => ({ id: i, label: `item number ${i} ${'x'.repeat(70)}` }));
      const text = JSON.stringify({ items });
      expect(text.length).to.be.above(4_500_000);
      const result = await step({ ...base, provider: answering(text, { size: 65_536 }), output: z.object({ items: z.array(z.object({ id: z.number(), label: z.string() })) }) });
      expect(result.output?.items).to.have.length(50_000);
    });

    it('a huge invalid output: the error message stays short, the text is whole', async () => {
      const text = `{"city": ${'9'.repeat(2_000_000)}`;
      const error = (await rejection(step({ ...base, provider: answering(text, { size: 65_536 }), output: Weather }))) as StructuredOutputError;
      expect(error.failure).to.equal('not_json');
      expect(error.text.length).to.equal(text.length);
      expect(error.message.length).to.be.below(600);
    });

    it('JSON nested 100 000 deep against a recursive schema: an error, never a crash', async () => {
      const deep = `${'{"c":'.repeat(100_000)}null${'}'.repeat(100_000)}`;
      const Node: JsonSchema = { $defs: { n: { anyOf: [{ type: 'null' }, { type: 'object', properties: { c: { $ref: '#/$defs/n' } } }] } }, type: 'object', properties: { c: { $ref: '#/$defs/n' } } };
      const error = await rejection(step({ ...base, provider: answering(deep, { size: 65_536 }), output: Node }));
      expect(StructuredOutputError.isInstance(error), String(error)).to.equal(true);
    });
  });

  describe('one rule for the parsed JSON, whatever the schema (as for tool arguments)', () => {
    const Numbers = z.object({ n: z.number(), rest: z.unknown() });
    const NumbersJson: JsonSchema = { type: 'object', properties: { n: { type: 'number' }, rest: {} }, required: ['n'] };
    const Anything = z.record(z.string(), z.unknown());
    const AnythingJson: JsonSchema = { type: 'object' };
    const upper: StandardSchema<unknown, unknown> = {
      '~standard': { version: 1, vendor: 'handmade', validate: (value) => ({ value }), jsonSchema: { input: () => ({ type: 'object' }) } },
    };

    it('a number out of range (1e400, which JSON.parse reads as Infinity) is an invalid output, at its path, for zod, a JSON Schema and another Standard Schema', async () => {
      for (const [output, text] of [
        [Numbers, '{"n": 1e400, "rest": 1}'],
        [NumbersJson, '{"n": 1e400, "rest": 1}'],
        [Anything, '{"n": 1e400, "rest": 1}'],
        [AnythingJson, '{"n": 1e400, "rest": 1}'],
        [upper, '{"n": 1e400, "rest": 1}'],
        [Numbers, '{"n": 1, "rest": {"deep": [0, -1e400]}}'],
        [NumbersJson, '{"n": 1, "rest": {"deep": [0, -1e400]}}'],
      ] as const) {
        const error = (await rejection(step({ ...base, provider: answering(text), output }))) as StructuredOutputError;
        expect(StructuredOutputError.isInstance(error), `${text}: ${String(error)}`).to.equal(true);
        expect(error.failure).to.equal('invalid');
        const path = text.includes('deep') ? ['rest', 'deep', 1] : ['n'];
        expect(error.issues, text).to.deep.equal([{ path, message: 'number out of range (not a finite double)' }]);
      }
      const wrapped = (await rejection(step({ ...base, provider: answering('{"value": [1, 1e999]}'), output: { type: 'array', items: { type: 'number' } } }))) as StructuredOutputError;
      expect(wrapped.issues).to.deep.equal([{ path: [1], message: 'number out of range (not a finite double)' }]);
      // Large but finite numbers are fine.
      expect((await step({ ...base, provider: answering('{"n": 1e308, "rest": 5e-324}'), output: NumbersJson })).output).to.deep.equal({ n: 1e308, rest: 5e-324 });
    });

    it('own __proto__ keys, and object-valued constructor/prototype keys, are stripped at any depth, for every kind of schema', async () => {
      const text = '{"a": 1, "__proto__": {"polluted": true}, "nested": {"__proto__": {"x": 1}, "list": [{"__proto__": 1, "b": 2}]}, "constructor": {"prototype": {"isAdmin": true}}, "toString": "plain"}';
      const schemas = [Anything, AnythingJson, upper, z.looseObject({ a: z.number() }), { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: true } as JsonSchema];
      for (const output of schemas) {
        const result = await step({ ...base, provider: answering(text), output });
        const value = result.output as Record<string, unknown>;
        expect(value, String(output)).to.deep.equal({ a: 1, nested: { list: [{ b: 2 }] }, toString: 'plain' });
        expect(Object.hasOwn(value, '__proto__')).to.equal(false);
        expect(Object.hasOwn(value['nested'] as object, '__proto__')).to.equal(false);
        expect(Object.hasOwn((value['nested'] as { list: object[] }).list[0]!, '__proto__')).to.equal(false);
        expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
      }
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
    });

    it('a schema that forbids additional properties accepts an answer whose only extra key is __proto__ (stripped before validation, as it is never handed out)', async () => {
      const Strict: JsonSchema = { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false };
      const result = await step({ ...base, provider: answering('{"a": 1, "__proto__": {"x": 1}}'), output: Strict });
      expect(result.output).to.deep.equal({ a: 1 });
      expect(Object.hasOwn(result.output as object, '__proto__')).to.equal(false);
    });
  });

  describe('in a step', () => {
    it('a response with tool calls has no output (the model has not answered yet), and is not parsed', async () => {
      const provider = new MockChatProvider([textPart('let me look'), toolCall('c1', 'fake', '{}')]);
      const result = await step({ ...base, provider, output: Weather });
      expect(result.output).to.equal(undefined);
      expect(result.toolCalls).to.have.length(1);
      expect(provider.requests.at(-1)!.output).to.not.equal(undefined);
    });

    it('onStepStart carries the output format; a failure still pairs start, end (with the error) and cleanup', async () => {
      const events: [string, unknown][] = [];
      const hooks = {
        onStepStart: (e: StepStartEvent) => void events.push(['start', e.output?.name]),
        onStepEnd: (e: StepEndEvent) => void events.push(['end', StructuredOutputError.isInstance(e.error)]),
        onCleanup: () => void events.push(['cleanup', undefined]),
      };
      await rejection(step({ ...base, provider: answering('nope'), output: structuredOutput(Weather, { name: 'w' }), hooks: [{ name: 'h', hooks }] }));
      expect(events).to.deep.equal([
        ['start', 'w'],
        ['end', true],
        ['cleanup', undefined],
      ]);
    });

    it('an unusable schema fails the step after its start event, with end and cleanup', async () => {
      const events: string[] = [];
      const hooks = { onStepStart: () => void events.push('start'), onStepEnd: () => void events.push('end'), onCleanup: () => void events.push('cleanup') };
      const error = await rejection(step({ ...base, provider: answering('{}'), output: z.object({ big: z.bigint() }), hooks: [{ name: 'h', hooks }] }));
      expect(InvalidOutputSchemaError.isInstance(error)).to.equal(true);
      expect(events).to.deep.equal(['start', 'end', 'cleanup']);
    });

    it('the same schema object is converted once, and concurrent steps each validate their own answer', async () => {
      const runs = Array.from({ length: 100 }, (_, i) => step({ ...base, provider: answering(`{"city": "c${i}", "celsius": ${i}}`), output: Weather }));
      const results = await Promise.all(runs);
      results.forEach((result, i) => expect(result.output).to.deep.equal({ city: `c${i}`, celsius: i }));
    });

    it('another Standard Schema library: validated with its validate, shown its Standard JSON Schema', async () => {
      const upper: StandardSchema<{ word: string }, string> = {
        '~standard': {
          version: 1,
          vendor: 'handmade',
          validate: (value) =>
            typeof value === 'object' && value !== null && typeof (value as { word?: unknown }).word === 'string'
              ? { value: (value as { word: string }).word.toUpperCase() }
              : { issues: [{ message: 'expected a word', path: [{ key: 'word' }] }] },
          jsonSchema: { input: () => ({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { word: { type: 'string' } }, required: ['word'] }) },
        },
      };
      const provider = answering('{"word": "hello"}');
      const result = await step({ ...base, provider, output: upper });
      const output: string | undefined = result.output;
      expect(output).to.equal('HELLO');
      expect(provider.requests.at(-1)!.output!.schema).to.deep.equal({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] });
      const error = (await rejection(step({ ...base, provider: answering('{"word": 1}'), output: upper }))) as StructuredOutputError;
      expect(error.issues).to.deep.equal([{ path: ['word'], message: 'expected a word' }]);
      const { jsonSchema: _none, ...withoutJsonSchema } = upper['~standard'];
      const noJson = await rejection(step({ ...base, provider: answering('{}'), output: { '~standard': withoutJsonSchema } }));
      expect(InvalidOutputSchemaError.isInstance(noJson)).to.equal(true);
    });

    it('runner.step takes output too, typed', async () => {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'm', setup: (ctx) => ctx.bindChatProvider('m', answering('{"city": "Lima", "celsius": 19}'), { default: true }) }));
      const result = await kernel.runner().step({ systemPrompt: '', history, output: Weather });
      const city: string | undefined = result.output?.city;
      expect(city).to.equal('Lima');
      await kernel.dispose();
    });
  });

  describe('in the agent loop', () => {
    const scripted = (...answers: (readonly ReturnType<typeof textPart | typeof toolCall>[])[]) => {
      const providers = answers.map((parts) => new MockChatProvider(parts, { usage: tokenUsage({ inputOther: 1, output: 2 }) }));
      let next = 0;
      return { providers, step: (options: Parameters<ConstructorParameters<typeof Agent>[0]['step']>[0]) => step({ ...options, provider: providers[next++]!, toolset: emptyToolset }) };
    };

    it("the turn's last step gives the output; steps with tool calls in between are not parsed", async () => {
      const { providers, step: stepFn } = scripted([toolCall('c1', 'fake', '{}')], [textPart('{"city": "Kyiv", "celsius": 12}')]);
      const agent = new Agent({ systemPrompt: '', step: stepFn });
      const turn = await agent.run('weather?', { output: Weather });
      const output: { city: string; celsius: number } | undefined = turn.output;
      expect(output).to.deep.equal({ city: 'Kyiv', celsius: 12 });
      expect(turn.steps).to.equal(2);
      expect(providers.map((p) => p.requests.at(-1)?.output?.name)).to.deep.equal(['output', 'output']);
    });

    it('an invalid answer fails the turn, unless told to retry once: then the model sees its mistake', async () => {
      const failing = scripted([textPart('not json')]);
      const error = await rejection(new Agent({ systemPrompt: '', step: failing.step }).run('hi', { output: Weather }));
      expect(StructuredOutputError.isInstance(error)).to.equal(true);

      const { step: stepFn } = scripted([textPart('{"city": 1}')], [textPart('{"city": "Bern", "celsius": 8}')]);
      const retries: unknown[] = [];
      const agent = new Agent({ systemPrompt: '', step: stepFn, retryInvalidOutput: true });
      const turn = await agent.run('hi', { output: Weather, onEvent: (e) => void (e.type === 'retry' && retries.push(e.error)) });
      expect(turn.output).to.deep.equal({ city: 'Bern', celsius: 8 });
      expect(turn.steps).to.equal(1);
      expect(turn.usage.output).to.equal(4, 'both attempts counted');
      expect(retries).to.have.length(1);
      const roles = agent.context.history.map((m) => m.role);
      expect(roles).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
      const correction = agent.context.history[2]!.content[0] as { text: string };
      expect(correction.text).to.contain('city').and.contain('JSON');
    });

    it('retries once only: a second invalid answer fails the turn', async () => {
      const { step: stepFn } = scripted([textPart('no')], [textPart('still no')], [textPart('{"city": "x", "celsius": 1}')]);
      const error = await rejection(new Agent({ systemPrompt: '', step: stepFn, retryInvalidOutput: true }).run('hi', { output: Weather }));
      expect(StructuredOutputError.isInstance(error)).to.equal(true);
      expect((error as StructuredOutputError).text).to.equal('still no');
    });

    it("kernel.agent() takes the agent's output for every turn", async () => {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'm', setup: (ctx) => ctx.bindChatProvider('m', answering('{"city": "Quito", "celsius": 14}'), { default: true }) }));
      const turn = await kernel.agent({ systemPrompt: '', output: Weather }).run('hi');
      expect(turn.output).to.deep.equal({ city: 'Quito', celsius: 14 });
      await kernel.dispose();
    });
  });

  it('hook errors stay hook errors (a throwing onStepStart does not touch the output)', async () => {
    const reports: HookErrorReport[] = [];
    const result = await step({
      ...base,
      provider: answering('{"city": "a", "celsius": 1}'),
      output: Weather,
      onHookError: (r) => void reports.push(r),
      hooks: [{ name: 'bad', hooks: { onStepStart: () => {
        throw new Error('hook');
      } } }],
    });
    expect(result.output).to.deep.equal({ city: 'a', celsius: 1 });
    expect(reports).to.have.length(1);
  });
});
