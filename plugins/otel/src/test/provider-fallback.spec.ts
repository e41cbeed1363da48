/**
 * The switches of a model fallback (`@kosong/provider-fallback`) as span events on the step's `chat`
 * span: the fallback reports each switch to the step (`ProviderGenerateOptions.onProviderSwitch`),
 * the step to its hooks (`onProviderSwitch`), and the plugin's hook adds the event. Real SDK, a real
 * context manager, the plugin's own span handling.
 */
import { APIConnectionError, APIStatusError, step, textPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { fallbackProvider, type FallbackChatProvider } from '@kosong/provider-fallback';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { expect } from 'chai';

import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_KOSONG_FALLBACK_FROM_MODEL,
  ATTR_KOSONG_FALLBACK_FROM_PROVIDER,
  ATTR_KOSONG_FALLBACK_REASON,
  ATTR_KOSONG_FALLBACK_TO_MODEL,
  ATTR_KOSONG_FALLBACK_TO_PROVIDER,
  ATTR_KOSONG_STEP_ID,
  EVENT_KOSONG_PROVIDER_FALLBACK,
} from '../conventions.js';
import { OtelStepHooks } from '../otel-step-hooks.js';
import { Telemetry, history, isError, kernelWith, rejectionOf, testToolset } from './support.js';

const failing = (error: unknown, modelName: string) => new MockChatProvider([], { generateError: error, modelName });
const answering = (modelName: string, delayMs?: number) => new MockChatProvider([textPart(`from ${modelName}`)], delayMs === undefined ? { modelName } : { modelName, delayMs });

describe('model fallback switches as span events', () => {
  let telemetry: Telemetry;
  beforeEach(() => {
    telemetry = new Telemetry();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterEach(async () => {
    context.disable();
    await telemetry.shutdown();
  });

  const chain = (extra: Parameters<typeof fallbackProvider>[1] = {}): FallbackChatProvider =>
    fallbackProvider([failing(new APIStatusError(503, 'overloaded'), 'primary-model'), answering('secondary-model')], extra);

  it('a switch is a kosong.provider.fallback event on the step\u2019s chat span (kernel + otelPlugin)', async () => {
    const provider = chain();
    const { kernel, reports } = await kernelWith(telemetry, provider, testToolset());
    const result = await kernel.runner().step({ systemPrompt: '', history });
    expect(result.message.content).to.deep.equal([textPart('from secondary-model')]);
    await kernel.dispose();
    const span = telemetry.span('chat primary-model');
    expect(span.events.map((event) => event.name)).to.deep.equal([EVENT_KOSONG_PROVIDER_FALLBACK]);
    expect(span.events[0]!.attributes).to.deep.equal({
      [ATTR_KOSONG_FALLBACK_FROM_PROVIDER]: 'mock',
      [ATTR_KOSONG_FALLBACK_FROM_MODEL]: 'primary-model',
      [ATTR_KOSONG_FALLBACK_TO_PROVIDER]: 'mock',
      [ATTR_KOSONG_FALLBACK_TO_MODEL]: 'secondary-model',
      [ATTR_KOSONG_FALLBACK_REASON]: 'error',
      [ATTR_ERROR_TYPE]: 'APIStatusError',
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: 503,
    });
    expect(isError(span), 'the step itself succeeded').to.equal(false);
    expect(reports).to.deep.equal([]);
  });

  it('a model skipped by its open breaker is an event too (reason circuit-open), on the next step\u2019s span', async () => {
    const provider = chain({ breaker: { consecutiveFailures: 1 } });
    const hooks = new OtelStepHooks(telemetry.options());
    await step({ provider, systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }], stepId: 'first' });
    await step({ provider, systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }], stepId: 'second' });
    const spans = telemetry.spans();
    const second = spans.find((span) => span.attributes[ATTR_KOSONG_STEP_ID] === 'second')!;
    expect(second.name, 'the step starts with the model in use').to.equal('chat secondary-model');
    expect(second.events).to.have.length(1);
    expect(second.events[0]!.attributes).to.deep.include({ [ATTR_KOSONG_FALLBACK_REASON]: 'circuit-open', [ATTR_ERROR_TYPE]: 'CircuitOpenError' });
    expect(second.events[0]!.attributes![ATTR_HTTP_RESPONSE_STATUS_CODE]).to.equal(undefined);
  });

  it('concurrent steps: each switch lands on its own step\u2019s span', async () => {
    const provider = fallbackProvider([failing(new APIConnectionError('refused'), 'primary-model'), answering('secondary-model', 5)], {
      breaker: false,
    });
    const hooks = new OtelStepHooks(telemetry.options());
    const steps = Array.from({ length: 20 }, (_, i) => step({ provider, systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }], stepId: `s${i}` }));
    await Promise.all(steps);
    const spans = telemetry.spans();
    expect(spans).to.have.length(20);
    for (const span of spans) {
      expect(span.events.map((event) => event.name), String(span.attributes[ATTR_KOSONG_STEP_ID])).to.deep.equal([EVENT_KOSONG_PROVIDER_FALLBACK]);
      expect(span.events[0]!.attributes![ATTR_ERROR_TYPE]).to.equal('APIConnectionError');
    }
  });

  it('a failure after the first part is no switch: no event, the step span carries the error', async () => {
    const late = new APIConnectionError('cut mid-stream');
    const provider = fallbackProvider([new MockChatProvider([textPart('Hel'), textPart('lo')], { errorAfter: { parts: 1, error: late }, modelName: 'primary-model' }), answering('secondary-model')]);
    const hooks = new OtelStepHooks(telemetry.options());
    expect(await rejectionOf(step({ provider, systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }] }))).to.equal(late);
    const span = telemetry.span('chat primary-model');
    expect(span.events.map((event) => event.name)).to.deep.equal(['exception']);
    expect(isError(span)).to.equal(true);
  });

  it('the fallback\u2019s own onSwitch listener hears the switch as well; a step without the plugin records nothing', async () => {
    const heard: string[] = [];
    const provider = chain({ onSwitch: (event) => void heard.push(`${event.from.modelName}->${event.to.modelName}`) });
    const hooks = new OtelStepHooks(telemetry.options());
    await step({ provider, systemPrompt: '', toolset: testToolset(), history, hooks: [{ name: 'otel', hooks }] });
    await step({ provider, systemPrompt: '', toolset: testToolset(), history });
    expect(heard).to.deep.equal(['primary-model->secondary-model', 'primary-model->secondary-model']);
    expect(telemetry.spans().map((span) => span.events.length)).to.deep.equal([1]);
  });
});
