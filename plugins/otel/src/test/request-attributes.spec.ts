import { step, textPart, type StepStartEvent } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { TRUNCATION_MARKER } from '../content.js';
import { OtelStepHooks } from '../otel-step-hooks.js';
import { Telemetry, history, kernelWith, testToolset } from './support.js';

describe('otelPlugin: the request details on the chat span', () => {
  let telemetry: Telemetry;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  it('records the generation options the step asks for as gen_ai.request.* (set at start, for samplers)', async () => {
    const provider = new MockChatProvider([textPart('ok')], { modelName: 'm' }).withGeneration({ temperature: 0.3, seed: 7 });
    const { kernel } = await kernelWith(telemetry, provider, testToolset());
    await kernel.runner().step({ systemPrompt: '', history, generation: { maxOutputTokens: 100, topP: 0.9, stopSequences: ['END', 'STOP'] } });
    await kernel.dispose();
    expect(telemetry.span('chat m').attributes).to.include({
      'gen_ai.request.max_tokens': 100,
      'gen_ai.request.temperature': 0.3,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.seed': 7,
    });
    expect(telemetry.span('chat m').attributes['gen_ai.request.stop_sequences']).to.deep.equal(['END', 'STOP']);
  });

  it('a step asking for structured output: gen_ai.output.type json; none without', async () => {
    const hooks = new OtelStepHooks(telemetry.options());
    const output = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    await step({ provider: new MockChatProvider([textPart('{"n": 1}')], { modelName: 'json' }), systemPrompt: '', toolset: testToolset(), history, output, hooks: [{ name: 'otel', hooks }] });
    await step({ provider: new MockChatProvider([textPart('plain')], { modelName: 'text' }), systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }] });
    expect(telemetry.span('chat json').attributes['gen_ai.output.type']).to.equal('json');
    expect(telemetry.span('chat text').attributes).to.not.have.property('gen_ai.output.type');
  });

  it('sets no request attribute for options not asked for, nor for values of the wrong type', () => {
    const hooks = new OtelStepHooks(telemetry.options());
    const event = {
      stepId: 's',
      tenant: undefined,
      provider: 'mock',
      model: 'm',
      history,
      generation: { maxOutputTokens: '100', stopSequences: [1, 2] } as unknown as StepStartEvent['generation'],
    };
    hooks.onStepStart(event);
    hooks.onCleanup({ ...event, leaked: [], cancelled: false });
    const attributes = telemetry.span('chat m').attributes;
    expect(Object.keys(attributes).filter((key) => key.startsWith('gen_ai.request.') && key !== 'gen_ai.request.model')).to.deep.equal([]);
  });

  it('with captureContent: the system prompt as gen_ai.system_instructions, the tools as gen_ai.tool.definitions', async () => {
    const hooks = new OtelStepHooks(telemetry.options({ captureContent: true }));
    await step({ provider: new MockChatProvider([textPart('ok')], { modelName: 'm' }), systemPrompt: 'You add.', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }] });
    const attributes = telemetry.span('chat m').attributes;
    expect(JSON.parse(attributes['gen_ai.system_instructions'] as string)).to.deep.equal([{ type: 'text', content: 'You add.' }]);
    expect(JSON.parse(attributes['gen_ai.tool.definitions'] as string)).to.deep.equal([
      { type: 'function', name: 'add', description: 'Adds.', parameters: { type: 'object' } },
      { type: 'function', name: 'fail', description: 'Fails.', parameters: { type: 'object' } },
    ]);
  });

  it('without captureContent: neither the system prompt nor the tool definitions', async () => {
    const hooks = new OtelStepHooks(telemetry.options());
    await step({ provider: new MockChatProvider([textPart('ok')], { modelName: 'm' }), systemPrompt: 'secret prompt', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }] });
    const attributes = telemetry.span('chat m').attributes;
    expect(attributes).to.not.have.property('gen_ai.system_instructions');
    expect(attributes).to.not.have.property('gen_ai.tool.definitions');
  });

  it('caps both: a long prompt is cut and marked, tools past the cap lose their parameters, the JSON stays valid', async () => {
    const hooks = new OtelStepHooks(telemetry.options({ captureContent: true, contentMaxLength: 30 }));
    const big = { type: 'object', properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    const toolset = { ...testToolset(), tools: [{ name: 'big', description: 'A tool with many parameters.', parameters: big }] };
    await step({ provider: new MockChatProvider([textPart('ok')], { modelName: 'm' }), systemPrompt: 'x'.repeat(1000), toolset, history, hooks: [{ name: 'otel', hooks }] });
    const attributes = telemetry.span('chat m').attributes;
    const [instructions] = JSON.parse(attributes['gen_ai.system_instructions'] as string) as { content: string }[];
    expect(instructions!.content).to.equal('x'.repeat(30) + TRUNCATION_MARKER);
    expect(JSON.parse(attributes['gen_ai.tool.definitions'] as string)).to.deep.equal([{ type: 'function', name: 'big', description: 'A tool with many parameters.' }]);
  });
});
