import { textPart, tokenUsage, toolCall, toolError, toolOk, type StepEventContext } from '@kosong/core';
import { expect } from 'chai';
import { BoundedCache } from '../bounded-cache.js';
import { MetricAttributes } from '../metric-attributes.js';
import { OtelStepHooks } from '../otel-step-hooks.js';
import { Telemetry, countOf, history, sumOf } from './support.js';

describe('attribute sets and span names built once and shared', () => {
  describe('BoundedCache', () => {
    it('keeps values until it is full, then starts over (never more than its capacity)', () => {
      const cache = new BoundedCache<string, number>(3);
      for (const [i, key] of ['a', 'b', 'c'].entries()) expect(cache.set(key, i)).to.equal(i);
      expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size]).to.deep.equal([0, 1, 2, 3]);
      cache.set('d', 3);
      expect([cache.get('a'), cache.get('d'), cache.size]).to.deep.equal([undefined, 3, 1]);
      for (let i = 0; i < 10_000; i++) cache.set(`k${i}`, i);
      expect(cache.size).to.be.at.most(3);
      expect(cache.get('k9999')).to.equal(9999);
    });
  });

  describe('MetricAttributes', () => {
    it('gives every step of one provider, model and tenant the same frozen attribute sets', () => {
      const attributes = new MetricAttributes(true);
      const first = attributes.step('openai', 'gpt', 'acme');
      expect(attributes.step('openai', 'gpt', 'acme')).to.equal(first);
      attributes.step('openai', 'other', 'acme');
      expect(attributes.step('openai', 'gpt', 'acme')).to.equal(first); // from the cache, not only the last step
      expect(Object.isFrozen(first.operation) && Object.isFrozen(first.inputTokens) && Object.isFrozen(first.outputTokens)).to.equal(true);
      expect(first.inputTokens).to.deep.equal({ ...first.operation, 'gen_ai.token.type': 'input' });
      expect(first.outputTokens).to.deep.equal({ ...first.operation, 'gen_ai.token.type': 'output' });
      expect(attributes.tool('add', 'acme')).to.equal(attributes.tool('add', 'acme'));
      expect(attributes.toolError('add', 'acme', 'tool_error')).to.deep.equal({ ...attributes.tool('add', 'acme'), 'error.type': 'tool_error' });
    });

    it('never mixes names that only differ by where they split (provider/model, tenant/tool)', () => {
      const attributes = new MetricAttributes(true);
      expect(attributes.step('a', 'b c', undefined).operation).to.include({ 'gen_ai.provider.name': 'a', 'gen_ai.request.model': 'b c' });
      expect(attributes.step('a b', 'c', undefined).operation).to.include({ 'gen_ai.provider.name': 'a b', 'gen_ai.request.model': 'c' });
      expect(attributes.step('a', 'b', undefined).operation).not.to.have.property('kosong.tenant.id');
      expect(attributes.step('a', 'b', '').operation).to.include({ 'kosong.tenant.id': '' });
      expect(attributes.tool('x', 't')).to.include({ 'gen_ai.tool.name': 'x', 'kosong.tenant.id': 't' });
      expect(attributes.tool('x', undefined)).not.to.have.property('kosong.tenant.id');
      expect(attributes.toolError('x', 't', 'a')).to.not.equal(attributes.toolError('x', 't', 'b'));
    });

    it('leaves the tenant out, and shares one set for all tenants, without tenantInMetrics', () => {
      const attributes = new MetricAttributes(false);
      expect(attributes.step('p', 'm', 'acme')).to.equal(attributes.step('p', 'm', 'globex'));
      expect(attributes.step('p', 'm', 'acme').operation).not.to.have.property('kosong.tenant.id');
      expect(attributes.tool('add', 'acme')).to.equal(attributes.tool('add', 'globex'));
    });
  });

  describe('OtelStepHooks with many models, tools and tenants (more than the caches keep)', () => {
    let telemetry: Telemetry;

    beforeEach(() => {
      telemetry = new Telemetry({ cardinalityLimit: 10_000 }); // 2,600 series per instrument
    });

    afterEach(async () => {
      await telemetry.shutdown();
    });

    it('names every span and counts every metric point under its own model, tool and tenant', async () => {
      const hooks = new OtelStepHooks(telemetry.options({ tenantInMetrics: true }));
      const steps = 2_600; // 1,300 models and tools: past the caches' 1,024 entries, so they start over
      for (let i = 0; i < steps; i++) {
        const context: StepEventContext = { stepId: `s${i}`, tenant: `t${i % 3}`, provider: 'p', model: `m${i % 1_300}` };
        const call = toolCall(`c${i}`, `tool${i % 1_300}`, '{}');
        const returnValue = i % 2 === 0 ? toolOk({ output: 'ok' }) : toolError({ message: 'no', brief: 'no' });
        hooks.onStepStart({ ...context, history, generation: {} });
        hooks.onToolCall({ ...context, toolCall: call, toolCallId: call.id, index: 0, executed: true });
        hooks.onToolResult({ ...context, toolCall: call, toolCallId: call.id, index: 0, result: { toolCallId: call.id, returnValue }, durationMs: 1 });
        const message = { role: 'assistant' as const, content: [textPart('hi')] };
        const usage = tokenUsage({ inputOther: i, output: 1 });
        hooks.onStepEnd({ ...context, message, messageId: `id${i}`, usage, finishReason: 'stop', toolCalls: [call], error: undefined, aborted: false, durationMs: 1 });
        hooks.onCleanup({ ...context, leaked: [], cancelled: false });
      }

      const spans = telemetry.spans();
      expect(spans).to.have.length(2 * steps);
      for (const span of spans) {
        const attributes = span.attributes;
        const expected = attributes['gen_ai.operation.name'] === 'chat' ? `chat ${attributes['gen_ai.request.model'] as string}` : `execute_tool ${attributes['gen_ai.tool.name'] as string}`;
        expect(span.name).to.equal(expected);
      }
      const metrics = await telemetry.metrics();
      for (const i of [0, 1, 1_299, 1_300, 2_599]) {
        const tenant = `t${i % 3}`;
        const model = `m${i % 1_300}`;
        const tool = `tool${i % 1_300}`;
        // Step i and step i ± 1300 share a model and a tool; a tenant only when i and i ± 1300 agree mod 3 (never: 1300 mod 3 = 1).
        expect(sumOf(metrics.get('gen_ai.client.token.usage'), { 'gen_ai.request.model': model, 'kosong.tenant.id': tenant, 'gen_ai.token.type': 'input' })).to.equal(i);
        expect(countOf(metrics.get('gen_ai.client.operation.duration'), { 'gen_ai.request.model': model, 'kosong.tenant.id': tenant })).to.equal(1);
        expect(sumOf(metrics.get('kosong.tool.calls'), { 'gen_ai.tool.name': tool, 'kosong.tenant.id': tenant })).to.equal(1);
        expect(sumOf(metrics.get('kosong.tool.errors'), { 'gen_ai.tool.name': tool, 'kosong.tenant.id': tenant, 'error.type': 'tool_error' })).to.equal(i % 2);
      }
      expect(sumOf(metrics.get('kosong.tool.calls'))).to.equal(steps);
      expect(sumOf(metrics.get('kosong.tool.errors'))).to.equal(steps / 2);
    });
  });
});
