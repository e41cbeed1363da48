/**
 * Every builder refuses options it does not know (issue 21 item 1): a misspelt security option
 * (`approvalSecrets`, `tenants`) must never be dropped quietly. Each is refused before anything
 * connects, so no Redis is needed.
 */
import { Kernel } from '@kosong/core';
import { expect } from 'chai';
import { AgentWorker, RedisContext, RemoteToolset, ToolWorker, TurnQueue, bullmqPlugin } from '../index.js';
import { ProbeToolset } from './support.js';

/** A port nothing listens on: a builder that got as far as connecting would not settle at once. */
const connection = 'redis://127.0.0.1:1';

async function refusal(make: () => unknown): Promise<Error> {
  try {
    await make();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the unknown option was accepted');
}

describe('unknown options are refused, naming them', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['TurnQueue', () => new TurnQueue({ connection, approvalSecrets: 'x' } as never), /^TurnQueue: unknown option "approvalSecrets" \(its options: connection, prefix, unavailableAfterMs, reconnectWindowMs, approvalSecret\)$/],
    ['AgentWorker', () => new AgentWorker({ connection, kernel: new Kernel(), approvalSecrets: 'x' } as never), /^AgentWorker: unknown option "approvalSecrets" \(its options: connection, kernel, .*approvalSecret, approvalMaxAgeMs\)$/],
    ['RemoteToolset', () => RemoteToolset.connect({ connection, name: 'files', tenants: 'acme' } as never), /^RemoteToolset: unknown option "tenants" \(its options: connection, name, tenant, /],
    ['ToolWorker', () => ToolWorker.start({ connection, name: 'files', toolset: new ProbeToolset(), retryOnWorkerLost: ['echo'] } as never), /^ToolWorker: unknown option "retryOnWorkerLost" \(its options: .*retryOnWorkerLoss/],
    ['RedisContext', () => new RedisContext({ connection, session: 's', fencing: 3 } as never), /^RedisContext: unknown option "fencing" \(its options: connection, tenant, session, prefix, fence, /],
    ['bullmqPlugin', () => bullmqPlugin({ connection, approvalsecret: 'x' } as never), /^bullmqPlugin: unknown option "approvalsecret" \(its options: connection, prefix, name, approvalSecret\)$/],
  ];
  for (const [owner, make, message] of cases) {
    it(`${owner}: a TypeError before anything connects`, async () => {
      const error = await refusal(make);
      expect(error).to.be.instanceOf(TypeError);
      expect(error.message).to.match(message);
    });
  }

  it('TurnQueue.submit and resume, and the options of a turn', async () => {
    const turns = new TurnQueue({ connection });
    try {
      expect(await refusal(() => turns.submit({ session: 's', input: 'hi', option: { maxSteps: 1 } } as never))).to.be.instanceOf(TypeError).with.property('message', 'TurnQueue.submit: unknown option "option" (its options: tenant, session, input, options)');
      expect((await refusal(() => turns.submit({ session: 's', input: 'hi', options: { maxStep: 1 } } as never))).message).to.match(/^TurnOptions: unknown option "maxStep"/);
      expect((await refusal(() => turns.resume({ session: 's', decisions: {}, approvals: [] } as never))).message).to.match(/^TurnQueue.resume: unknown option "approvals"/);
      expect(await refusal(() => new TurnQueue(undefined as never))).to.be.instanceOf(TypeError).with.property('message', 'TurnQueue: the options must be an object');
    } finally {
      await turns.close();
    }
  });

  it('bullmqPlugin.remoteToolset: an unknown extra option', async () => {
    const plugin = bullmqPlugin({ connection });
    expect((await refusal(() => plugin.remoteToolset('acme', 'files', { timeout: 5 } as never))).message).to.match(/^RemoteToolset: unknown option "timeout"/);
  });
});
