/**
 * End to end: a SimpleToolset under core's `step()`, with the MockChatProvider of
 * `@kosong/provider-echo` (a workspace package, used by these tests only).
 */
import { step, textPart, toolCall, toolOk, type CleanupEvent, type Message, type ToolCall } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { z } from 'zod';
import { combineToolsets, defineJsonSchemaTool, defineTool, SimpleToolset } from '../index.js';
import { sleep } from './support.js';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];
const base = { systemPrompt: 'You are a test.', history, onHookError: () => undefined };

const plus = defineTool({
  name: 'plus',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number().describe('First'), b: z.number().default(0).describe('Second') }),
  execute: ({ a, b }) => String(a + b),
});
const echo = defineJsonSchemaTool<{ text: string }>({
  name: 'echo',
  description: 'Echoes text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: ({ text }) => text,
});

describe('SimpleToolset under step()', () => {
  it('the model sees the generated schemas, and every call gets its result in call order', async () => {
    const toolset = combineToolsets(new SimpleToolset([plus]), new SimpleToolset([echo]));
    const provider = new MockChatProvider([
      textPart('Let me compute.'),
      toolCall('c1', 'plus', '{"a": 1, "b": 2}'),
      toolCall('c2', 'plus', '{"a": 1}'),
      toolCall('c3', 'plus', '{"b": "x"}'),
      toolCall('c4', 'echo', '{"text": "two\nlines"}'),
      toolCall('c5', 'echo', '{"text": "hi", "loud": true}'),
      toolCall('c6', 'minus', '{}'),
      toolCall('c7', 'plus', '{"a": 1,'),
    ]);
    const result = await step({ ...base, provider, toolset });
    expect(provider.lastRequest?.tools).to.deep.equal([
      {
        name: 'plus',
        description: 'Adds two numbers.',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number', description: 'First' }, b: { type: 'number', default: 0, description: 'Second' } },
          required: ['a'],
        },
      },
      { name: 'echo', description: 'Echoes text.', parameters: echo.parameters },
    ]);
    const results = await result.toolResults();
    expect(results.map((r) => r.toolCallId)).to.deep.equal(['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
    const values = results.map((r) => r.returnValue);
    expect(values[0]).to.deep.equal(toolOk({ output: '3' }));
    expect(values[1]).to.deep.equal(toolOk({ output: '1' }));
    expect(values[2]!.message).to.equal(
      'Error validating JSON arguments: a: Invalid input: expected number, received undefined\nb: Invalid input: expected number, received string',
    );
    expect(values[3]).to.deep.equal(toolOk({ output: 'two\nlines' }));
    expect(values[4]!.message).to.equal('Error validating JSON arguments: loud: Unrecognized key');
    expect(values[5]!.message).to.equal('Tool `minus` not found');
    expect(values[6]!.message).to.match(/^Error parsing JSON arguments: /);
  });

  it('runs tools while the model is still streaming, concurrently within the limit', async () => {
    const events: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const slow = defineTool({
      name: 'slow',
      description: '',
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        events.push(`start ${id}`);
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(25);
        running--;
        return id;
      },
    });
    const provider = new MockChatProvider(
      [toolCall('a', 'slow', '{"id":"a"}'), toolCall('b', 'slow', '{"id":"b"}'), toolCall('c', 'slow', '{"id":"c"}'), textPart('still talking'), textPart('done')],
      { delayMs: 5 },
    );
    const result = await step({
      ...base,
      provider,
      toolset: new SimpleToolset([slow], { maxConcurrency: 2 }),
      onPart: (part) => {
        if (part.type === 'text') events.push(`part ${part.text}`);
      },
    });
    expect((await result.toolResults()).map((r) => r.returnValue.output)).to.deep.equal(['a', 'b', 'c']);
    expect(events.indexOf('start a')).to.be.lessThan(events.indexOf('part still talking'));
    expect(maxRunning).to.equal(2);
  });

  it('an aborted step aborts its tools; one that ignores its signal is reported as leaked', async () => {
    const cleanups: CleanupEvent[] = [];
    const honours = defineTool({
      name: 'honours',
      description: '',
      parameters: z.object({}),
      execute: (_args, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    let release!: () => void;
    const ignores = defineTool({
      name: 'ignores',
      description: '',
      parameters: z.object({}),
      execute: () => new Promise<string>((resolve) => (release = () => resolve('too late'))),
    });
    const controller = new AbortController();
    const calls: ToolCall[] = [toolCall('h', 'honours', '{}'), toolCall('i', 'ignores', '{}')];
    const result = await step({
      ...base,
      provider: new MockChatProvider(calls),
      toolset: new SimpleToolset([honours, ignores]),
      signal: controller.signal,
      cleanupTimeoutMs: 30,
      hooks: [{ name: 'test', hooks: { onCleanup: (event) => void cleanups.push(event) } }],
    });
    const reason = new Error('user stop');
    controller.abort(reason);
    try {
      await result.toolResults();
      expect.fail('toolResults() should reject with the abort reason');
    } catch (error) {
      expect(error).to.equal(reason);
    }
    expect(cleanups).to.have.length(1);
    expect(cleanups[0]!.cancelled).to.equal(true);
    expect(cleanups[0]!.leaked.map((c) => c.id)).to.deep.equal(['i']);
    release();
  });
});
