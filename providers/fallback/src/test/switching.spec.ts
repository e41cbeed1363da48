import {
  APIConnectionError,
  APIStatusError,
  ChatProviderError,
  InvalidGenerationOptionError,
  isRetryableError,
  retryDelayMs,
  defaultRetryPolicy,
  textPart,
} from '@kosong/core';
import { completionChunk, textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

import { AllModelsFailedError, CircuitOpenError, FallbackStream, fallbackProvider, type FallbackSwitchEvent } from '../index.js';
import { closedPort, collect, openai, rejection, statusReply, textOf, useServers, user } from './support.js';

describe('fallbackProvider: switching before the first part (real HTTP)', () => {
  const servers = useServers();
  const chain = (switches: FallbackSwitchEvent[] = [], primaryURL = servers.primary.baseURL) =>
    fallbackProvider([openai(primaryURL, 'primary-model'), openai(servers.secondary.baseURL, 'secondary-model')], {
      onSwitch: (event) => void switches.push(event),
    });

  it('a primary answering 500: the secondary answers, and the switch is an event with both models and the error', async () => {
    servers.primary.reply(statusReply(500, 'Internal error'));
    servers.secondary.reply(textReply(['Hello', ' from the secondary']));
    const switches: FallbackSwitchEvent[] = [];
    const stream = await chain(switches).generate('be brief', [], [user('hi')]);
    expect(textOf(await collect(stream))).to.equal('Hello from the secondary');
    expect(servers.primary.requests).to.have.length(1);
    expect(servers.secondary.requests).to.have.length(1);
    expect(servers.secondary.lastRequest.body).to.deep.include({ model: 'secondary-model' });
    expect(switches).to.have.length(1);
    const [event] = switches;
    expect(event!.from).to.deep.equal({ index: 0, name: 'openai', modelName: 'primary-model' });
    expect(event!.to).to.deep.equal({ index: 1, name: 'openai', modelName: 'secondary-model' });
    expect(event!.reason).to.equal('error');
    expect(APIStatusError.isInstance(event!.error) && event!.error.statusCode).to.equal(500);
    expect(Object.isFrozen(event)).to.equal(true);
    // The stream says which model served it, and what was passed over.
    expect(stream).to.be.instanceOf(FallbackStream);
    const served = stream as FallbackStream;
    expect(served.model.modelName).to.equal('secondary-model');
    expect(served.passedOver.map((failure) => failure.model.index)).to.deep.equal([0]);
    expect(served.id).to.equal('chatcmpl-test');
    expect(served.usage?.output).to.equal(2);
    expect(served.finishReason).to.equal('stop');
  });

  it('a primary answering 429 with retry-after: the secondary answers at once (no wait), the event carries the retry-after', async () => {
    servers.primary.reply(statusReply(429, 'Rate limit reached', { 'retry-after': '30' }));
    servers.secondary.reply(textReply(['ok']));
    const switches: FallbackSwitchEvent[] = [];
    const started = Date.now();
    expect(textOf(await collect(await chain(switches).generate('', [], [user('hi')])))).to.equal('ok');
    expect(Date.now() - started).to.be.below(5_000);
    const error = switches[0]!.error as APIStatusError;
    expect(error).to.include({ statusCode: 429, retryAfterSeconds: 30 });
  });

  it('a primary whose connection is refused: the secondary answers', async () => {
    const port = await closedPort();
    servers.secondary.reply(textReply(['ok']));
    const switches: FallbackSwitchEvent[] = [];
    expect(textOf(await collect(await chain(switches, `http://127.0.0.1:${port}/v1`).generate('', [], [user('hi')])))).to.equal('ok');
    expect(APIConnectionError.isInstance(switches[0]!.error)).to.equal(true);
    expect((switches[0]!.error as Error).message).to.match(/ECONNREFUSED/);
  });

  it('a primary whose stream breaks before its first part (HTTP 200, then the connection cut): still a switch', async () => {
    servers.primary.reply({ type: 'stream', chunks: [], done: false, then: 'destroy' });
    servers.secondary.reply(textReply(['from the secondary']));
    const switches: FallbackSwitchEvent[] = [];
    expect(textOf(await collect(await chain(switches).generate('', [], [user('hi')])))).to.equal('from the secondary');
    expect(switches).to.have.length(1);
    expect(APIConnectionError.isInstance(switches[0]!.error)).to.equal(true);
  });

  it('a primary that answers: no switch, no request to the secondary', async () => {
    servers.primary.reply(textReply(['primary']));
    const switches: FallbackSwitchEvent[] = [];
    expect(await collect(await chain(switches).generate('', [], [user('hi')]))).to.deep.equal([textPart('primary')]);
    expect(servers.secondary.requests).to.have.length(0);
    expect(switches).to.deep.equal([]);
  });

  it('an error that does not switch (a 400) is thrown as it is: no switch, the secondary never asked', async () => {
    servers.primary.reply(statusReply(400, 'Bad request: messages must not be empty'));
    const switches: FallbackSwitchEvent[] = [];
    const error = await rejection(chain(switches).generate('', [], [user('hi')]));
    expect(APIStatusError.isInstance(error) && error.statusCode).to.equal(400);
    expect(AllModelsFailedError.isInstance(error)).to.equal(false);
    expect(servers.secondary.requests).to.have.length(0);
    expect(switches).to.deep.equal([]);
  });

  it('the secondary failing with an error that does not switch, after a switch: that error, as it is', async () => {
    servers.primary.reply(statusReply(503, 'overloaded'));
    servers.secondary.reply(statusReply(401, 'bad key'));
    const error = await rejection(chain().generate('', [], [user('hi')]));
    expect(APIStatusError.isInstance(error) && error.statusCode).to.equal(401);
  });

  it('policy.shouldSwitch decides instead of the default (here: a 400 switches, a 500 does not)', async () => {
    const seen: unknown[] = [];
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], {
      shouldSwitch: (error, model) => {
        seen.push([model.index, (error as APIStatusError).statusCode]);
        return APIStatusError.isInstance(error) && error.statusCode === 400;
      },
    });
    servers.primary.reply(statusReply(400, 'content policy'), statusReply(500, 'down'));
    servers.secondary.reply(textReply(['s']));
    expect(textOf(await collect(await provider.generate('', [], [user('hi')])))).to.equal('s');
    const error = await rejection(provider.generate('', [], [user('hi')]));
    expect(APIStatusError.isInstance(error) && error.statusCode).to.equal(500);
    expect(seen).to.deep.equal([
      [0, 400],
      [0, 500],
    ]);
  });

  it('a bad generation option is refused before any request (no switch: every model would refuse it)', async () => {
    const error = await rejection(chain().generate('', [], [user('hi')], { generation: { temperature: 7 } }));
    expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
    expect(servers.primary.requests.length + servers.secondary.requests.length).to.equal(0);
  });

  describe('every model failing', () => {
    it('one AllModelsFailedError carrying each model\u2019s error, in chain order, retryable since the last is', async () => {
      servers.primary.reply(statusReply(500, 'primary down'));
      servers.secondary.reply(statusReply(429, 'secondary busy', { 'retry-after': '2', 'x-request-id': 'req-2' }));
      const error = await rejection(chain().generate('', [], [user('hi')]));
      expect(error).to.be.instanceOf(AggregateError);
      expect(error).to.be.instanceOf(AllModelsFailedError);
      expect(AllModelsFailedError.isInstance(error)).to.equal(true);
      expect(ChatProviderError.isInstance(error)).to.equal(true);
      const failed = error as AllModelsFailedError;
      expect(failed.name).to.equal('AllModelsFailedError');
      expect(failed.errors.map((e) => (e as APIStatusError).statusCode)).to.deep.equal([500, 429]);
      expect(failed.failures.map((f) => f.model.modelName)).to.deep.equal(['primary-model', 'secondary-model']);
      expect(failed.cause).to.equal(failed.errors[1]);
      expect(failed.message).to.match(/^Every model failed: \[0\] openai\/primary-model: .*primary down.*; \[1\] openai\/secondary-model: .*secondary busy/);
      // Of the last error's kind: the agent loop retries it, after the last model's retry-after.
      expect(failed.retryable).to.equal(true);
      expect(isRetryableError(failed)).to.equal(true);
      expect(APIStatusError.isInstance(failed)).to.equal(true);
      expect(failed).to.include({ statusCode: 429, retryAfterSeconds: 2, requestId: 'req-2' });
      expect(retryDelayMs(defaultRetryPolicy, 1, failed)).to.equal(2_000);
    });

    it('not retryable when the last model\u2019s error is not (a custom policy switched on it)', async () => {
      const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { shouldSwitch: () => true });
      servers.primary.reply(statusReply(503, 'down'));
      servers.secondary.reply(statusReply(400, 'bad'));
      const failed = (await rejection(provider.generate('', [], [user('hi')]))) as AllModelsFailedError;
      expect(AllModelsFailedError.isInstance(failed)).to.equal(true);
      expect(failed.retryable).to.equal(false);
      expect(isRetryableError(failed)).to.equal(false);
      expect(failed.statusCode).to.equal(400);
    });

    it('a connection error last: of that kind, retryable', async () => {
      const port = await closedPort();
      servers.primary.reply(statusReply(500));
      const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(`http://127.0.0.1:${port}/v1`, 's')]);
      const failed = (await rejection(provider.generate('', [], [user('hi')]))) as AllModelsFailedError;
      expect(APIConnectionError.isInstance(failed) && failed.retryable && isRetryableError(failed)).to.equal(true);
      expect(APIStatusError.isInstance(failed)).to.equal(false);
      expect(failed.statusCode).to.equal(undefined);
    });

    it('a skipped model is in it as a CircuitOpenError (not retryable when last)', async () => {
      const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { breaker: { consecutiveFailures: 1 } });
      servers.primary.reply(statusReply(500), statusReply(500));
      servers.secondary.reply(statusReply(500), statusReply(500));
      await rejection(provider.generate('', [], [user('hi')])); // both breakers open
      const failed = (await rejection(provider.generate('', [], [user('hi')]))) as AllModelsFailedError;
      expect(failed.errors.every((e) => CircuitOpenError.isInstance(e))).to.equal(true);
      expect((failed.errors[0] as CircuitOpenError).breaker).to.equal('open');
      expect(failed.retryable).to.equal(false);
      expect(servers.primary.requests.length + servers.secondary.requests.length).to.equal(2);
    });
  });

  it('a chain of three: each model passed over is one event', async () => {
    const third = await (await import('@kosong/provider-openai/testing')).ChatCompletionsServer.start();
    try {
      servers.primary.reply(statusReply(500));
      servers.secondary.reply(statusReply(502));
      third.reply({ type: 'stream', chunks: [completionChunk({ delta: { content: 'third' } }), completionChunk({ delta: {}, finishReason: 'stop' })] });
      const switches: FallbackSwitchEvent[] = [];
      const provider = fallbackProvider([openai(servers.primary.baseURL, 'a'), openai(servers.secondary.baseURL, 'b'), openai(third.baseURL, 'c')], {
        onSwitch: (event) => void switches.push(event),
      });
      expect(textOf(await collect(await provider.generate('', [], [user('hi')])))).to.equal('third');
      expect(switches.map((e) => [e.from.modelName, e.to.modelName, (e.error as APIStatusError).statusCode])).to.deep.equal([
        ['a', 'b', 500],
        ['b', 'c', 502],
      ]);
    } finally {
      await third.close();
    }
  });
});
