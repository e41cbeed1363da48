import { APIStatusError, step } from '@kosong/core';
import { textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';
import sinon from 'sinon';

import { CircuitOpenError, fallbackProvider, type BreakerChangeEvent, type FallbackSwitchEvent } from '../index.js';
import { closedPort, collect, delay, openai, recordingToolset, rejection, statusReply, textOf, useServers, user } from './support.js';

describe('fallbackProvider: circuit breakers (real HTTP, cockatiel)', () => {
  const servers = useServers();
  /** Only `Date` is faked (cockatiel's clock): HTTP and its timers stay real. */
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  });
  afterEach(() => clock.restore());

  const COOL_DOWN = 10_000;
  function chain(extra: { switches?: FallbackSwitchEvent[]; changes?: BreakerChangeEvent[]; failures?: number } = {}) {
    return fallbackProvider([openai(servers.primary.baseURL, 'primary-model'), openai(servers.secondary.baseURL, 'secondary-model')], {
      breaker: { consecutiveFailures: extra.failures ?? 3, halfOpenAfterMs: COOL_DOWN },
      onSwitch: (event) => void extra.switches?.push(event),
      onBreakerChange: (event) => void extra.changes?.push(event),
    });
  }
  const ask = async (provider: ReturnType<typeof chain>): Promise<string> => textOf(await collect(await provider.generate('', [], [user('hi')])));

  it('opens after N failures in a row: the primary is then skipped without a request, and name/modelName say the secondary', async () => {
    const switches: FallbackSwitchEvent[] = [];
    const changes: BreakerChangeEvent[] = [];
    const provider = chain({ switches, changes });
    servers.primary.reply(statusReply(500), statusReply(500), statusReply(500));
    servers.secondary.reply(textReply(['s1']), textReply(['s2']), textReply(['s3']), textReply(['s4']));
    expect([provider.name, provider.modelName]).to.deep.equal(['openai', 'primary-model']);
    for (let i = 1; i <= 3; i++) expect(await ask(provider)).to.equal(`s${i}`);
    expect(servers.primary.requests).to.have.length(3);
    expect(provider.status().map((s) => s.breaker)).to.deep.equal(['open', 'closed']);
    expect(changes.map((c) => [c.model.index, c.state])).to.deep.equal([[0, 'open']]);
    expect(APIStatusError.isInstance(changes[0]!.error) && changes[0]!.error.statusCode).to.equal(500);
    expect(provider.modelName).to.equal('secondary-model');
    expect(provider.current).to.not.equal(undefined);

    expect(await ask(provider)).to.equal('s4');
    expect(servers.primary.requests, 'skipped: no request').to.have.length(3);
    const skip = switches.at(-1)!;
    expect(skip.reason).to.equal('circuit-open');
    expect(CircuitOpenError.isInstance(skip.error)).to.equal(true);
    expect((skip.error as CircuitOpenError).breaker).to.equal('open');
    expect((skip.error as CircuitOpenError).halfOpensAt).to.equal(Date.now() + COOL_DOWN);
    expect((skip.error as Error).message).to.match(/^openai\/primary-model was skipped: its circuit breaker is open until /);
  });

  it('failures must be in a row: a success in between starts the count again', async () => {
    const provider = chain();
    servers.primary.reply(statusReply(500), statusReply(500), textReply(['p']), statusReply(500), statusReply(500));
    servers.secondary.reply(...Array.from({ length: 4 }, () => textReply(['s'])));
    for (const expected of ['s', 's', 'p', 's', 's']) expect(await ask(provider)).to.equal(expected);
    expect(provider.status()[0]!.breaker).to.equal('closed');
  });

  it('429 with retry-after and refused connections count too', async () => {
    const port = await closedPort();
    const provider = fallbackProvider([openai(`http://127.0.0.1:${port}/v1`, 'gone'), openai(servers.secondary.baseURL, 's')], { breaker: { consecutiveFailures: 2 } });
    expect(await ask(provider)).to.equal('Hello from the test server.');
    expect(await ask(provider)).to.equal('Hello from the test server.');
    expect(provider.status()[0]!.breaker).to.equal('open');

    const limited = chain({ failures: 1 });
    servers.primary.reply(statusReply(429, 'slow down', { 'retry-after': '20' }));
    await ask(limited);
    expect(limited.status()[0]!.breaker).to.equal('open');
  });

  it('a 429 with retry-after leaves the model alone that long, below the failure count: skipped without a request, then asked again', async () => {
    const switches: FallbackSwitchEvent[] = [];
    const provider = chain({ switches, failures: 5 });
    servers.primary.reply(statusReply(429, 'slow down', { 'retry-after': '20' }), textReply(['p']));
    servers.secondary.reply(textReply(['s1']), textReply(['s2']), textReply(['s3']));
    expect(await ask(provider)).to.equal('s1');
    expect(provider.status()[0]).to.include({ breaker: 'closed', available: false });
    expect(provider.modelName, 'the model a step starts with').to.equal('secondary-model');
    clock.tick(19_000);
    expect(await ask(provider)).to.equal('s2');
    expect(servers.primary.requests, 'resting: no request').to.have.length(1);
    const skip = switches.at(-1)!;
    expect(skip.reason).to.equal('retry-after');
    expect((skip.error as CircuitOpenError).breaker).to.equal('retry-after');
    expect((skip.error as CircuitOpenError).halfOpensAt).to.equal(Date.now() + 1_000);
    expect((skip.error as Error).message).to.match(/^openai\/primary-model was skipped: it asked to be retried after .* \(retry-after\)$/);
    clock.tick(1_000);
    expect(await ask(provider)).to.equal('p');
    expect(provider.status()[0]).to.include({ breaker: 'closed', available: true });
  });

  it('a retry-after is capped by maxRetryAfterMs, and ignored with 0; the last model of the chain is asked even while it rests', async () => {
    const capped = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { breaker: { maxRetryAfterMs: 2_000 } });
    servers.primary.reply(statusReply(429, 'slow down', { 'retry-after': '3600' }), textReply(['p']));
    servers.secondary.reply(textReply(['s']));
    expect(await ask(capped)).to.equal('s');
    clock.tick(2_000);
    expect(await ask(capped), 'asked again after the cap, not after an hour').to.equal('p');

    const ignoring = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { breaker: { maxRetryAfterMs: 0 } });
    servers.primary.reply(statusReply(429, 'slow down', { 'retry-after': '60' }), textReply(['p2']));
    servers.secondary.reply(textReply(['s2']));
    expect(await ask(ignoring)).to.equal('s2');
    expect(await ask(ignoring), 'no rest').to.equal('p2');

    // The secondary rests too, but it is the last: it is asked, and its own 429 reaches the caller with its retry-after.
    const both = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')]);
    const before = servers.secondary.requests.length;
    servers.primary.reply(statusReply(429, 'a', { 'retry-after': '30' }));
    servers.secondary.reply(statusReply(429, 'b', { 'retry-after': '40' }), statusReply(429, 'c', { 'retry-after': '40' }));
    const first = await rejection(both.generate('', [], [user('hi')]));
    const second = await rejection(both.generate('', [], [user('hi')]));
    expect((first as { retryAfterSeconds?: number }).retryAfterSeconds).to.equal(40);
    expect((second as { retryAfterSeconds?: number }).retryAfterSeconds, 'the secondary was asked again').to.equal(40);
    expect(servers.secondary.requests.length - before).to.equal(2);
  });

  it('refuses a bad maxRetryAfterMs', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
      expect(() => fallbackProvider([openai(servers.primary.baseURL, 'p')], { breaker: { maxRetryAfterMs: bad as number } })).to.throw(TypeError, /maxRetryAfterMs/);
    }
  });

  it('half-opens after the cool-down: one trial call reaches the primary, its success closes the breaker', async () => {
    const changes: BreakerChangeEvent[] = [];
    const provider = chain({ failures: 1, changes });
    servers.primary.reply(statusReply(500), textReply(['primary is back']));
    await ask(provider);
    expect(provider.status()[0]).to.deep.include({ breaker: 'open', available: false });
    clock.tick(COOL_DOWN - 1);
    await ask(provider);
    expect(servers.primary.requests, 'still cooling down').to.have.length(1);
    clock.tick(1);
    expect(provider.status()[0]).to.deep.include({ breaker: 'open', available: true });
    expect(provider.modelName, 'a call now would try the primary').to.equal('primary-model');
    expect(await ask(provider)).to.equal('primary is back');
    expect(servers.primary.requests).to.have.length(2);
    expect(provider.status()[0]!.breaker).to.equal('closed');
    expect(changes.map((c) => c.state)).to.deep.equal(['open', 'half-open', 'closed']);
  });

  it('a trial call that fails opens the breaker again, for another cool-down', async () => {
    const changes: BreakerChangeEvent[] = [];
    const provider = chain({ failures: 1, changes });
    servers.primary.reply(statusReply(500), statusReply(503));
    await ask(provider);
    clock.tick(COOL_DOWN);
    expect(await ask(provider)).to.equal('Hello from the test server.'); // the trial failed: the secondary answered
    expect(servers.primary.requests).to.have.length(2);
    expect(provider.status()[0]!.breaker).to.equal('open');
    expect(changes.map((c) => c.state)).to.deep.equal(['open', 'half-open', 'open']);
    clock.tick(COOL_DOWN - 1);
    await ask(provider);
    expect(servers.primary.requests, 'open again for a whole cool-down').to.have.length(2);
  });

  it('while the trial call runs, other calls skip the primary at once (they do not wait for it)', async () => {
    const provider = chain({ failures: 1 });
    servers.primary.reply(statusReply(500), { ...textReply(['slow primary']), headerDelayMs: 400 });
    await ask(provider);
    clock.tick(COOL_DOWN);
    const trial = ask(provider);
    await delay(50);
    expect(provider.status()[0]!.breaker).to.equal('half-open');
    expect(provider.status()[0]!.available).to.equal(false);
    const started = performance.now();
    expect(await ask(provider)).to.equal('Hello from the test server.');
    expect(performance.now() - started).to.be.below(300);
    expect(servers.primary.requests, 'the other call made no request to the primary').to.have.length(2);
    expect(await trial).to.equal('slow primary');
    expect(provider.status()[0]!.breaker).to.equal('closed');
  });

  it('an aborted trial call proves nothing: the breaker opens again', async () => {
    const provider = chain({ failures: 1 });
    servers.primary.reply(statusReply(500), { type: 'hang' });
    await ask(provider);
    clock.tick(COOL_DOWN);
    const controller = new AbortController();
    const call = provider.generate('', [], [user('hi')], { signal: controller.signal });
    await delay(50);
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await rejection(call)).to.equal(reason);
    expect(provider.status()[0]!.breaker).to.equal('open');
    expect(servers.secondary.requests).to.have.length(1); // only the first call's
  });

  it('an error that does not switch counts for nothing (a 400 neither opens nor keeps the count)', async () => {
    const provider = chain({ failures: 2 });
    servers.primary.reply(statusReply(500), statusReply(400), statusReply(500));
    await ask(provider);
    await rejection(provider.generate('', [], [user('hi')]));
    expect(provider.status()[0]!.breaker).to.equal('closed');
    await ask(provider);
    expect(provider.status()[0]!.breaker, 'two in a row, the 400 in between not counted').to.equal('open');
  });

  it('is shared by every step using the provider, and by its copies (withThinking, withGeneration)', async () => {
    const provider = chain({ failures: 2 });
    servers.primary.reply(statusReply(500), statusReply(500));
    const toolset = recordingToolset();
    await step({ provider, systemPrompt: '', toolset, history: [user('a')] });
    await step({ provider: provider.withThinking('high'), systemPrompt: '', toolset, history: [user('b')] });
    expect(provider.status()[0]!.breaker).to.equal('open');
    const copy = provider.withGeneration({ maxOutputTokens: 50 });
    expect(copy.status()[0]!.breaker).to.equal('open');
    await step({ provider: copy, systemPrompt: '', toolset, history: [user('c')] });
    expect(servers.primary.requests).to.have.length(2);
  });

  it('isolate(index) holds a model open by hand until disposed', async () => {
    const provider = chain();
    const handle = provider.isolate(0);
    expect(provider.status()[0]!.breaker).to.equal('isolated');
    expect(await ask(provider)).to.equal('Hello from the test server.');
    expect(servers.primary.requests).to.have.length(0);
    handle.dispose();
    expect(await ask(provider)).to.equal('Hello from the test server.');
    expect(servers.primary.requests).to.have.length(1);
    expect(() => provider.isolate(2)).to.throw(RangeError, /no model at index 2/);
  });

  it('breaker: false: no breakers (every call tries the primary first)', async () => {
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { breaker: false });
    servers.primary.reply(...Array.from({ length: 6 }, () => statusReply(500)));
    for (let i = 0; i < 6; i++) await ask(provider);
    expect(servers.primary.requests).to.have.length(6);
    expect(provider.status().map((s) => s.breaker)).to.deep.equal(['closed', 'closed']);
    expect(() => provider.isolate(0)).to.throw(TypeError, /no breakers/);
  });

  it('a failure after the first part does not count (the breaker counts what decides a switch)', async () => {
    const provider = chain({ failures: 1 });
    servers.primary.reply({ ...textReply(['Hel']), done: false, then: 'destroy', chunks: textReply(['Hel']).chunks.slice(0, 2) });
    const stream = await provider.generate('', [], [user('hi')]);
    await rejection(collect(stream));
    expect(provider.status()[0]!.breaker).to.equal('closed');
  });
});
