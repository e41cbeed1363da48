/**
 * `onProviderSwitch`: a provider that moves a call to another model (a fallback) tells the step
 * through `ProviderGenerateOptions.onProviderSwitch`, and the step tells its hooks — with the step's
 * correlation ids, frozen, guarded, and only when a hook listens. (From `fallbackProvider` through the
 * kernel: providers/fallback/src/test/step.spec.ts.)
 */
import {
  step,
  textPart,
  type HookErrorReport,
  type Message,
  type ProviderSwitchEvent,
  type StepHooks,
  type StreamedMessage,
  type Tool,
} from '@kosong/core';
import type { ProviderGenerateOptions, ProviderSwitch } from '@kosong/core/provider-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { FakeToolset } from './support.js';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];

/** A provider that reports the given switches before it answers, and keeps the options it was given. */
class SwitchingProvider extends MockChatProvider {
  readonly seen: ProviderGenerateOptions[] = [];
  constructor(private readonly switches: readonly unknown[]) {
    super([textPart('answer')], { modelName: 'chain' });
  }
  override generate(systemPrompt: string, tools: readonly Tool[], messages: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    this.seen.push(options);
    for (const change of this.switches) options.onProviderSwitch?.(change as ProviderSwitch);
    return super.generate(systemPrompt, tools, messages, options);
  }
}

const change: ProviderSwitch = { from: { provider: 'openai', model: 'gpt-a' }, to: { provider: 'anthropic', model: 'claude-b' }, reason: 'error', error: new Error('503') };

describe('the onProviderSwitch hook', () => {
  it('hears each switch the provider reports, with the step ids, frozen', async () => {
    const events: ProviderSwitchEvent[] = [];
    const provider = new SwitchingProvider([change, { ...change, from: change.to, to: { provider: 'mock', model: 'last' }, reason: 'circuit-open' }]);
    const result = await step({ provider, systemPrompt: '', history, toolset: new FakeToolset(), stepId: 's1', context: { user: 7 }, hooks: [{ name: 'h', hooks: { onProviderSwitch: (e) => void events.push(e) } }] });
    expect(result.message.content).to.deep.equal([textPart('answer')]);
    expect(events.map((e) => [e.stepId, e.provider, e.model, e.from.model, e.to.model, e.reason])).to.deep.equal([
      ['s1', 'mock', 'chain', 'gpt-a', 'claude-b', 'error'],
      ['s1', 'mock', 'chain', 'claude-b', 'last', 'circuit-open'],
    ]);
    expect(events[0]!.error).to.equal(change.error);
    expect(events[0]!.context).to.deep.equal({ user: 7 });
    expect(Object.isFrozen(events[0]) && Object.isFrozen(events[0]!.from) && Object.isFrozen(events[0]!.to)).to.equal(true);
  });

  it('is given to the provider only when a hook listens, and then as a property that does not enumerate', async () => {
    const bare = new SwitchingProvider([]);
    await step({ provider: bare, systemPrompt: '', history, toolset: new FakeToolset(), hooks: [{ name: 'h', hooks: { onPart: () => undefined } }] });
    expect(bare.seen[0]!.onProviderSwitch).to.equal(undefined);
    const heard = new SwitchingProvider([]);
    await step({ provider: heard, systemPrompt: '', history, toolset: new FakeToolset(), generation: { temperature: 0.5 }, hooks: [{ name: 'h', hooks: { onProviderSwitch: () => undefined } }] });
    expect(heard.seen[0]!.onProviderSwitch).to.be.a('function');
    expect(Object.keys(heard.seen[0]!)).to.deep.equal(['generation']);
    expect(JSON.parse(JSON.stringify(heard.seen[0]))).to.deep.equal({ generation: { temperature: 0.5 } });
  });

  it('is guarded: a hook that throws is reported and the step goes on; a malformed notice from the provider throws nothing', async () => {
    const reports: HookErrorReport[] = [];
    const provider = new SwitchingProvider([change, null, { from: null }]);
    const throwing: StepHooks = {
      onProviderSwitch: () => {
        throw new Error('hook broke');
      },
    };
    const result = await step({ provider, systemPrompt: '', history, toolset: new FakeToolset(), hooks: [{ name: 'bad', hooks: throwing }], onHookError: (r) => void reports.push(r) });
    expect(result.message.content).to.deep.equal([textPart('answer')]);
    expect(reports.map((r) => [r.plugin, r.hook, (r.error as Error).message])).to.deep.equal([['bad', 'onProviderSwitch', 'hook broke']]);
  });
});
