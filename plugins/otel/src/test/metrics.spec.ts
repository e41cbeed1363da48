import { APIStatusError, textPart, tokenUsage } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { OPERATION_DURATION_BUCKETS, TOKEN_USAGE_BUCKETS } from '../conventions.js';
import { Telemetry, callParts, countOf, history, kernelWith, pointsOf, rejectionOf, sumOf, testToolset } from './support.js';

describe('otelPlugin metrics', () => {
  let telemetry: Telemetry;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  async function runSteps(tenantInMetrics: boolean): Promise<void> {
    const usage = tokenUsage({ inputOther: 10, inputCacheRead: 30, inputCacheCreation: 2, output: 7 });
    const ok = new MockChatProvider([textPart('hi'), ...callParts('c1', 'add', '{}'), ...callParts('c2', 'add', '{}'), ...callParts('c3', 'fail', '{}')], {
      usage,
      modelName: 'm1',
    });
    const { kernel } = await kernelWith(telemetry, ok, testToolset((call) => (call.id === 'c3' ? 'error' : 'ok')), { otel: { tenantInMetrics } });
    kernel.tenants.define('acme');
    await (await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history })).toolResults();
    await kernel.dispose();

    const failing = new MockChatProvider([], { generateError: new APIStatusError(429, 'slow down'), modelName: 'm1' });
    const second = await kernelWith(telemetry, failing, testToolset(), { otel: { tenantInMetrics } });
    await rejectionOf(second.kernel.runner().step({ systemPrompt: '', history }));
    await second.kernel.dispose();
  }

  it('records the operation duration (s), token usage by type, tool calls and tool errors', async () => {
    await runSteps(false);
    const metrics = await telemetry.metrics();

    const duration = metrics.get('gen_ai.client.operation.duration');
    expect(duration?.descriptor.unit).to.equal('s');
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'mock', 'gen_ai.request.model': 'm1' };
    const [succeeded, failed] = [pointsOf(duration, base).filter((p) => !('error.type' in p.attributes)), pointsOf(duration, { 'error.type': 'APIStatusError' })];
    expect(succeeded).to.have.length(1);
    expect(failed).to.have.length(1);
    expect(countOf(duration, base)).to.equal(2);
    const histogram = succeeded[0]!.value as Histogram;
    expect(histogram.sum).to.be.greaterThan(0).and.lessThan(5); // seconds, not milliseconds
    expect(histogram.buckets.boundaries).to.deep.equal(OPERATION_DURATION_BUCKETS);

    const tokens = metrics.get('gen_ai.client.token.usage');
    expect(tokens?.descriptor.unit).to.equal('{token}');
    expect(sumOf(tokens, { ...base, 'gen_ai.token.type': 'input' })).to.equal(42); // cache reads and writes included
    expect(sumOf(tokens, { ...base, 'gen_ai.token.type': 'output' })).to.equal(7);
    expect(countOf(tokens)).to.equal(2); // the failed step reported no usage
    expect((pointsOf(tokens)[0]!.value as Histogram).buckets.boundaries).to.deep.equal(TOKEN_USAGE_BUCKETS);

    const calls = metrics.get('kosong.tool.calls');
    expect(calls?.descriptor.unit).to.equal('{call}');
    expect(sumOf(calls, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add' })).to.equal(2);
    expect(sumOf(calls, { 'gen_ai.tool.name': 'fail' })).to.equal(1);
    const errors = metrics.get('kosong.tool.errors');
    expect(pointsOf(errors).map((p) => p.attributes)).to.deep.equal([
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'fail', 'error.type': 'tool_error' },
    ]);
    expect(sumOf(errors)).to.equal(1);

    for (const metric of metrics.values()) for (const point of pointsOf(metric)) expect(point.attributes).not.to.have.property('kosong.tenant.id');
  });

  it('adds the tenant to metric points only with tenantInMetrics', async () => {
    await runSteps(true);
    const metrics = await telemetry.metrics();
    expect(sumOf(metrics.get('gen_ai.client.token.usage'), { 'kosong.tenant.id': 'acme', 'gen_ai.token.type': 'input' })).to.equal(42);
    expect(sumOf(metrics.get('kosong.tool.calls'), { 'kosong.tenant.id': 'acme' })).to.equal(3);
    // The step without a tenant has no tenant attribute.
    expect(pointsOf(metrics.get('gen_ai.client.operation.duration'), { 'error.type': 'APIStatusError' })[0]!.attributes).not.to.have.property('kosong.tenant.id');
  });
});
