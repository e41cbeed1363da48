import { APIConnectionError, APITimeoutError, step, textPart } from '@kosong/core';
import { completionChunk, textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

import { fallbackProvider, type FailureAfterOutputEvent, type FallbackSwitchEvent } from '../index.js';
import { collect, delay, drain, openai, recordingToolset, rejection, statusReply, useServers, user, within } from './support.js';

describe('fallbackProvider: never after the first part, and abort (real HTTP)', () => {
  const servers = useServers();
  function chain(events: { switches?: FallbackSwitchEvent[]; late?: FailureAfterOutputEvent[] } = {}, timeoutMs?: number) {
    const options = timeoutMs === undefined ? {} : { timeoutMs };
    return fallbackProvider([openai(servers.primary.baseURL, 'primary-model', options), openai(servers.secondary.baseURL, 'secondary-model')], {
      onSwitch: (event) => void events.switches?.push(event),
      onFailureAfterOutput: (event) => void events.late?.push(event),
    });
  }
  const cutAfterHel = { type: 'stream' as const, chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'destroy' as const };

  it('a stream that breaks after its first part: the error, as it is; no switch; onFailureAfterOutput says so', async () => {
    servers.primary.reply(cutAfterHel);
    const switches: FallbackSwitchEvent[] = [];
    const late: FailureAfterOutputEvent[] = [];
    const { parts, error } = await drain(await chain({ switches, late }).generate('', [], [user('hi')]));
    expect(parts).to.deep.equal([textPart('Hel')]);
    expect(APIConnectionError.isInstance(error)).to.equal(true);
    expect(servers.secondary.requests).to.have.length(0);
    expect(switches).to.deep.equal([]);
    expect(late).to.have.length(1);
    expect(late[0]!.model).to.deep.equal({ index: 0, name: 'openai', modelName: 'primary-model' });
    expect(late[0]!.error).to.equal(error);
  });

  it('a stream that stalls after its first part: the timeout is the error, not a switch', async () => {
    servers.primary.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
    const { parts, error } = await drain(await chain({}, 150).generate('', [], [user('hi')]));
    expect(parts).to.deep.equal([textPart('Hel')]);
    expect(APITimeoutError.isInstance(error)).to.equal(true);
    expect(servers.secondary.requests).to.have.length(0);
  });

  it('after a switch, the secondary breaking after its first part: its error, no going back to anyone', async () => {
    servers.primary.reply(statusReply(500));
    servers.secondary.reply(cutAfterHel);
    const late: FailureAfterOutputEvent[] = [];
    const { parts, error } = await drain(await chain({ late }).generate('', [], [user('hi')]));
    expect(parts).to.deep.equal([textPart('Hel')]);
    expect(APIConnectionError.isInstance(error)).to.equal(true);
    expect(late.map((e) => e.model.modelName)).to.deep.equal(['secondary-model']);
    expect(servers.primary.requests).to.have.length(1);
  });

  it('through step(): a failure after the first part is the step\u2019s error, not a switch', async () => {
    servers.primary.reply(cutAfterHel);
    const switches: FallbackSwitchEvent[] = [];
    const error = await rejection(step({ provider: chain({ switches }), systemPrompt: '', toolset: recordingToolset(), history: [user('hi')] }));
    expect(APIConnectionError.isInstance(error)).to.equal(true);
    expect(switches).to.deep.equal([]);
    expect(servers.secondary.requests).to.have.length(0);
  });

  it('stopping early closes the model\u2019s request', async () => {
    servers.primary.reply({ ...textReply(['a', 'b', 'c']), chunkDelayMs: 50 });
    const stream = await chain().generate('', [], [user('hi')]);
    for await (const part of stream) {
      expect(part).to.deep.equal(textPart('a'));
      break;
    }
    expect(await within(servers.primary.lastRequest.closed)).to.equal('aborted');
    expect(() => stream[Symbol.asyncIterator]()).to.throw(TypeError, /iterated once/);
  });

  describe('abort', () => {
    it('during the primary\u2019s request: rejects with the reason at once, never switches, counts nothing', async () => {
      servers.primary.reply({ type: 'hang' });
      const switches: FallbackSwitchEvent[] = [];
      const provider = chain({ switches });
      const controller = new AbortController();
      const call = provider.generate('', [], [user('hi')], { signal: controller.signal });
      await delay(50);
      const reason = new Error('user pressed Ctrl-C');
      const started = performance.now();
      controller.abort(reason);
      expect(await rejection(call)).to.equal(reason);
      expect(performance.now() - started).to.be.below(100);
      expect(servers.secondary.requests).to.have.length(0);
      expect(switches).to.deep.equal([]);
      expect(await within(servers.primary.lastRequest.closed)).to.equal('aborted');
      expect(provider.status()[0]!.breaker).to.equal('closed');
    });

    it('already aborted: rejects before any request', async () => {
      const reason = new Error('too late');
      expect(await rejection(chain().generate('', [], [user('hi')], { signal: AbortSignal.abort(reason) }))).to.equal(reason);
      expect(servers.primary.requests.length + servers.secondary.requests.length).to.equal(0);
    });

    it('mid-stream: the stream throws the reason; no onFailureAfterOutput (an abort is no failure)', async () => {
      servers.primary.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'Hel' } })], done: false, then: 'hang' });
      const late: FailureAfterOutputEvent[] = [];
      const controller = new AbortController();
      const stream = await chain({ late }).generate('', [], [user('hi')], { signal: controller.signal });
      const reason = new Error('stop');
      const reading = drain(stream);
      await delay(30);
      controller.abort(reason);
      const { parts, error } = await reading;
      expect(parts).to.deep.equal([textPart('Hel')]);
      expect(error).to.equal(reason);
      expect(late).to.deep.equal([]);
    });

    it('while the secondary is being asked, after a switch: the reason, no further switch', async () => {
      servers.primary.reply(statusReply(500));
      servers.secondary.reply({ type: 'hang' });
      const switches: FallbackSwitchEvent[] = [];
      const controller = new AbortController();
      const call = chain({ switches }).generate('', [], [user('hi')], { signal: controller.signal });
      await delay(80);
      const reason = new Error('stop');
      controller.abort(reason);
      expect(await rejection(call)).to.equal(reason);
      expect(switches).to.have.length(1);
    });
  });

  it('an answer with no parts at all is the model\u2019s answer (no switch)', async () => {
    servers.primary.reply({ type: 'stream', chunks: [completionChunk({ delta: {}, finishReason: 'stop' })] });
    const stream = await chain().generate('', [], [user('hi')]);
    expect(await collect(stream)).to.deep.equal([]);
    expect(stream.finishReason).to.equal('stop');
    expect(servers.secondary.requests).to.have.length(0);
  });
});
