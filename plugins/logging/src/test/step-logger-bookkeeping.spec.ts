import { textPart, toolCall, type CleanupEvent, type StepEventContext, type StepStartEvent, type ToolCallEvent } from '@kosong/core';
import { expect } from 'chai';
import { REDACTED, SecretScrubber, StepLogger } from '../index.js';
import { MemoryDestination } from './support.js';

const history = [{ role: 'user' as const, content: [textPart('go')] }];
const context = (stepId: string, provider = 'mock'): StepEventContext => ({ stepId, tenant: undefined, provider, model: 'm' });
const start = (stepId: string, provider?: string): StepStartEvent => ({ ...context(stepId, provider), history, generation: {} }) as unknown as StepStartEvent;
const cleanup = (stepId: string, provider?: string): CleanupEvent => ({ ...context(stepId, provider), leaked: [], cancelled: false });

/** Runs the start and cleanup of one step through the logger's hooks. */
function runStep(logs: StepLogger, stepId: string, provider?: string): void {
  void logs.hooks.onStepStart!(start(stepId, provider));
  void logs.hooks.onCleanup!(cleanup(stepId, provider));
}

/** Reports a hook failure of `stepId` without a provider: the line's provider is the step logger's, or null if it was forgotten. */
function providerOfLateReport(logs: StepLogger, destination: MemoryDestination, stepId: string): unknown {
  destination.raw.length = 0;
  logs.hookErrorSink.report({ plugin: 'p', hook: 'onStepEnd', stepId, tenant: undefined, provider: undefined, model: undefined, kind: 'threw', error: 'x', detached: false });
  return destination.only('hook.error')['provider'];
}

describe('StepLogger bookkeeping', () => {
  it('keeps the loggers of the last 256 finished steps for late reports, then forgets the oldest first', () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    runStep(logs, 'first', 'p-first');
    for (let i = 0; i < 255; i++) runStep(logs, `s${i}`);
    expect(providerOfLateReport(logs, destination, 'first')).to.equal('p-first'); // 256 finished: still known
    runStep(logs, 'one-more');
    expect(providerOfLateReport(logs, destination, 'first')).to.equal(null); // the oldest, forgotten
    expect(providerOfLateReport(logs, destination, 's0')).to.equal('mock');
    for (let i = 0; i < 10_000; i++) runStep(logs, `t${i}`);
    expect(providerOfLateReport(logs, destination, 's0')).to.equal(null);
    expect(providerOfLateReport(logs, destination, 't9999')).to.equal('mock');
    expect(providerOfLateReport(logs, destination, 't9744')).to.equal('mock');
    expect(providerOfLateReport(logs, destination, 't9743')).to.equal(null);
  });

  it('keeps the newer logger of a step id the application reused, past the older one\'s turn to be forgotten', () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    runStep(logs, 'dup', 'older');
    for (let i = 0; i < 100; i++) runStep(logs, `s${i}`);
    runStep(logs, 'dup', 'newer');
    for (let i = 100; i < 300; i++) runStep(logs, `s${i}`); // the older entry's turn came; the newer one's not yet
    expect(providerOfLateReport(logs, destination, 'dup')).to.equal('newer');
  });

  it('builds no record for a level that is off (tool calls and cleanups are debug)', () => {
    const destination = new MemoryDestination();
    let reads = 0;
    const call = toolCall('c1', 'echo', '{}');
    const toolCallEvent = { ...context('s'), toolCallId: 'c1', index: 0, executed: true } as ToolCallEvent;
    Object.defineProperty(toolCallEvent, 'toolCall', { get: () => (reads++, call) });
    const cleanupEvent = { ...context('s'), leaked: [] } as unknown as CleanupEvent;
    Object.defineProperty(cleanupEvent, 'cancelled', { get: () => (reads++, false) });

    for (const level of ['info', 'debug'] as const) {
      const logs = new StepLogger({ destination, level });
      void logs.hooks.onStepStart!(start('s'));
      void logs.hooks.onToolCall!(toolCallEvent);
      void logs.hooks.onCleanup!(cleanupEvent);
      if (level === 'info') {
        expect(reads, 'fields read at info').to.equal(0);
        expect(destination.events('tool.call')).to.have.length(0);
      } else {
        expect(reads).to.be.greaterThan(0);
        expect(destination.only('tool.call')).to.include({ tool: 'echo', toolCallId: 'c1' });
        expect(destination.only('step.cleanup')).to.include({ cancelled: false });
      }
    }
  });

  it('scrubs and redacts keys correctly however many distinct keys it has seen (its cache of keys starts over)', () => {
    const KEY = 'sk-live-123';
    const scrubber = new SecretScrubber({ secrets: [KEY] });
    for (let i = 0; i < 3_000; i++) {
      const value = scrubber.scrubValue({ [`k${i}`]: i, [`x-${KEY}-${i}`]: true, password: `p${i}`, Authorization: null, [`n${i}`]: { apiKey: i } });
      expect(value).to.deep.equal({ [`k${i}`]: i, [`x-${REDACTED}-${i}`]: true, password: REDACTED, Authorization: null, [`n${i}`]: { apiKey: REDACTED } });
    }
    expect(scrubber.scrubValue({ a: Number.POSITIVE_INFINITY, b: -0, c: false })).to.deep.equal({ a: 'Infinity', b: -0, c: false });
  });
});

describe('SecretScrubber.scrubRecord', () => {
  const KEY = 'sk-live-123';

  it('scrubs a record in place as scrubValue would: strings, renamed and redacted keys, nested values copied', () => {
    const scrubber = new SecretScrubber({ secrets: [KEY], maxStringLength: 20 });
    const nested = { note: `has ${KEY}`, secret: 'x' };
    const error = new Error(`failed with ${KEY}`);
    const record: Record<string, unknown> = {
      event: 'tool.result',
      count: 3,
      ok: true,
      none: null,
      missing: undefined,
      nan: Number.NaN,
      text: `a ${KEY} b`,
      long: 'y'.repeat(30),
      [`k-${KEY}`]: 'x'.repeat(30), // renamed: its value must be cut once, not again when met under its new name
      password: 'hunter2',
      nested,
      error,
    };
    const expected = scrubber.scrubValue({ ...record });
    const scrubbed = scrubber.scrubRecord(record);
    expect(scrubbed).to.equal(record);
    expect(JSON.parse(JSON.stringify(scrubbed))).to.deep.equal(JSON.parse(JSON.stringify(expected)));
    expect(record[`k-${REDACTED}`]).to.equal(`${'x'.repeat(20)}…[truncated]`);
    expect(record).not.to.have.property(`k-${KEY}`);
    expect(record).to.include({ password: REDACTED, text: `a ${REDACTED} b`, nan: 'NaN', count: 3, ok: true, none: null });
    expect(record['nested']).to.deep.equal({ note: `has ${REDACTED}`, secret: REDACTED }).and.not.equal(nested);
    expect(nested.note).to.equal(`has ${KEY}`); // what the record held is copied, not changed
    expect(error.message).to.include(KEY);
    expect(JSON.stringify(record)).not.to.include(KEY);
  });

  it('bounds what the record holds as scrubValue does (cycles, depth)', () => {
    const scrubber = new SecretScrubber();
    const record: Record<string, unknown> = { event: 'x' };
    record['self'] = record;
    let deep: Record<string, unknown> = { bottom: true };
    for (let i = 0; i < 20; i++) deep = { deep };
    record['deep'] = deep;
    scrubber.scrubRecord(record);
    expect(record['self']).to.equal('[Circular]');
    expect(JSON.stringify(record['deep'])).to.include('[Truncated]');
  });
});
