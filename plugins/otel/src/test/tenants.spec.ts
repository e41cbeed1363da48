import { Kernel, definePlugin, textPart, type ChatProvider } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { otelPlugin } from '../otel-plugin.js';
import { Telemetry, callParts, history, idOf, parentOf, testToolset } from './support.js';

/** A provider streaming `calls` tool calls between text deltas, a part every ms (so steps interleave). */
function interleavingProvider(label: string, calls: number): ChatProvider {
  const parts = Array.from({ length: calls }, (_, i) => [textPart(`${label} ${i} `), ...callParts(`${label}-${i}`, 'add', `{"i":${i}}`)]).flat();
  return new MockChatProvider([...parts, textPart('done')], { delayMs: 1, modelName: `${label}-model` });
}

describe('otelPlugin under concurrency', () => {
  it("keeps two tenants' concurrent steps apart: every tool span is a child of its own step's span, tenants match", async () => {
    const telemetry = new Telemetry();
    const kernel = new Kernel();
    await kernel.use(
      definePlugin({ name: 'providers', setup: (ctx) => ctx.bindChatProvider('acme', interleavingProvider('acme', 4)) }),
      definePlugin({ name: 'globex-provider', setup: (ctx) => ctx.bindChatProvider('globex', interleavingProvider('globex', 3)) }),
      otelPlugin(telemetry.options()),
    );
    // Tools take a while, in a different order than they were called, so results and calls interleave.
    kernel.tenants.define('acme', { toolset: testToolset((call) => ({ delayMs: 1 + (Number(call.id.split('-')[1]) % 3) * 2 })), provider: 'acme' });
    kernel.tenants.define('globex', { toolset: testToolset((call) => ({ delayMs: 5 - Number(call.id.split('-')[1]) })), provider: 'globex' });

    const STEPS_PER_TENANT = 5;
    const runs = ['acme', 'globex'].flatMap((tenant) =>
      Array.from({ length: STEPS_PER_TENANT }, async (_, i) => {
        const result = await kernel.runner({ tenant }).step({ systemPrompt: '', history, stepId: `${tenant}-step-${i}` });
        return result.toolResults();
      }),
    );
    await Promise.all(runs);
    await kernel.dispose();

    const spans = telemetry.spans();
    const steps = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(steps).to.have.length(2 * STEPS_PER_TENANT);
    expect(tools).to.have.length(STEPS_PER_TENANT * (4 + 3));
    const stepsById = new Map(steps.map((s) => [idOf(s), s]));
    // Each step is its own trace (no span was active around the runs).
    expect(new Set(steps.map((s) => s.spanContext().traceId)).size).to.equal(steps.length);
    for (const step of steps) {
      const tenant = step.attributes['kosong.tenant.id'] as string;
      expect(step.name).to.equal(`chat ${tenant}-model`);
      expect(step.attributes['kosong.step.id']).to.match(new RegExp(`^${tenant}-step-\\d$`));
      const children = tools.filter((t) => parentOf(t) === idOf(step));
      expect(children.map((t) => t.attributes['gen_ai.tool.call.id']).sort()).to.deep.equal(
        Array.from({ length: tenant === 'acme' ? 4 : 3 }, (_, i) => `${tenant}-${i}`),
      );
    }
    for (const tool of tools) {
      const parent = stepsById.get(parentOf(tool)!);
      expect(parent, 'every tool span has a step span of this run as its parent').not.to.equal(undefined);
      expect(tool.attributes['kosong.tenant.id']).to.equal(parent!.attributes['kosong.tenant.id']);
      expect(tool.attributes['gen_ai.tool.call.id'] as string).to.match(new RegExp(`^${parent!.attributes['kosong.tenant.id']}-`));
      expect(tool.spanContext().traceId).to.equal(parent!.spanContext().traceId);
    }
    await telemetry.shutdown();
  });

  it('gives each kernel that uses the plugin its own state', async () => {
    const telemetry = new Telemetry();
    const plugin = otelPlugin(telemetry.options());
    const kernels = [new Kernel(), new Kernel()];
    for (const [i, kernel] of kernels.entries()) {
      await kernel.use(
        definePlugin({ name: 'p', setup: (ctx) => ctx.bindChatProvider('mock', interleavingProvider(`k${i}`, 2)) }),
        definePlugin({ name: 't', setup: (ctx) => ctx.bindToolset(testToolset()) }),
        plugin,
      );
    }
    // The same step id in two kernels at once: different hook objects, so no sharing.
    await Promise.all(kernels.map(async (kernel) => (await kernel.runner().step({ systemPrompt: '', history, stepId: 'same' })).toolResults()));
    await Promise.all(kernels.map((kernel) => kernel.dispose()));

    const steps = telemetry.spans().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(steps.map((s) => s.name).sort()).to.deep.equal(['chat k0-model', 'chat k1-model']);
    for (const step of steps) {
      const model = (step.attributes['gen_ai.request.model'] as string).replace('-model', '');
      const children = telemetry.spans().filter((t) => parentOf(t) === idOf(step));
      expect(children.map((t) => t.attributes['gen_ai.tool.call.id']).sort()).to.deep.equal([`${model}-0`, `${model}-1`]);
    }
    await telemetry.shutdown();
  });
});
