import { textPart, tokenUsage } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { Telemetry, countOf, history, kernelWith, pointsOf, sumOf, testToolset } from './support.js';

describe('otelPlugin: the cost metric (kosong.client.cost)', () => {
  let telemetry: Telemetry;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  it("records each step's cost in USD with the token points' attributes (tenant included with tenantInMetrics), from the kernel's prices", async () => {
    const usage = tokenUsage({ inputOther: 10, inputCacheRead: 30, inputCacheCreation: 2, output: 7 });
    // 'openai/gpt-4o' is priced by the tokenlens catalog: $2.5 input, $1.25 cache read, $10 output per million tokens.
    const priced = new MockChatProvider([textPart('hi')], { usage, modelName: 'openai/gpt-4o' });
    const { kernel } = await kernelWith(telemetry, priced, testToolset(), { otel: { tenantInMetrics: true } });
    kernel.tenants.define('acme');
    await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history });
    await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history });
    const [ledger] = await kernel.usage.query({ tenant: 'acme' });
    await kernel.dispose();

    const metrics = await telemetry.metrics();
    const cost = metrics.get('kosong.client.cost');
    expect(cost?.descriptor.unit).to.equal('USD');
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'mock', 'gen_ai.request.model': 'openai/gpt-4o', 'kosong.tenant.id': 'acme' };
    const input = sumOf(cost, { ...base, 'gen_ai.token.type': 'input' });
    const output = sumOf(cost, { ...base, 'gen_ai.token.type': 'output' });
    expect(input).to.be.closeTo(2 * (10 * 2.5 + 30 * 1.25 + 2 * 2.5) * 1e-6, 1e-15);
    expect(output).to.be.closeTo(2 * 7 * 10 * 1e-6, 1e-15);
    expect(input + output, "the usage ledger's cost").to.be.closeTo(ledger!.costUsd!, 1e-15);
    // The token points carry the same attributes.
    expect(sumOf(metrics.get('gen_ai.client.token.usage'), { ...base, 'gen_ai.token.type': 'input' })).to.equal(84);
  });

  it('records no cost for a model without a price (unknown, not 0)', async () => {
    const unpriced = new MockChatProvider([textPart('hi')], { usage: tokenUsage({ inputOther: 5, output: 5 }), modelName: 'nobody-knows' });
    const { kernel } = await kernelWith(telemetry, unpriced, testToolset());
    await kernel.runner().step({ systemPrompt: '', history });
    await kernel.dispose();
    const metrics = await telemetry.metrics();
    expect(countOf(metrics.get('gen_ai.client.token.usage'))).to.equal(2);
    expect(pointsOf(metrics.get('kosong.client.cost'))).to.deep.equal([]);
  });
});
