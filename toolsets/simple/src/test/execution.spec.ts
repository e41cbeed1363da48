import { imageURLPart, textPart, toolError, toolOk, type ToolContext, type ToolResult, type ToolReturnValue } from '@kosong/core';
import { expect } from 'chai';
import { z } from 'zod';
import { defineTool, SimpleToolset, truncationNote, type CallableTool, type ToolLimits } from '../index.js';
import { call, contextFor, deferred, run, sleep } from './support.js';

const empty = z.object({});

/** A tool that runs `body`; `name` defaults to 't'. */
function tool(body: (context: ToolContext) => Promise<string | ToolReturnValue> | string | ToolReturnValue, extra: ToolLimits = {}, name = 't'): CallableTool {
  return defineTool({ name, description: '', parameters: empty, execute: (_args, context) => body(context), ...extra });
}

/** Resolves when the signal aborts, or at once if it has. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** Whether a promise has settled after the pending microtasks and one macrotask turn. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('SimpleToolset execution', () => {
  describe('concurrency', () => {
    /** A toolset whose tool sleeps `ms` and records how many run at once. */
    function measured(options: { maxConcurrency?: number }, ms = 15) {
      const stats = { running: 0, max: 0, started: 0 };
      const toolset = new SimpleToolset(
        [
          tool(async () => {
            stats.started++;
            stats.max = Math.max(stats.max, ++stats.running);
            await sleep(ms);
            stats.running--;
            return 'done';
          }),
        ],
        options,
      );
      return { toolset, stats };
    }

    it('runs calls concurrently, all at once without a limit', async () => {
      const { toolset, stats } = measured({});
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 6 }, () => run(toolset, 't', null)));
      expect(results.every((r) => r.returnValue.output === 'done')).to.equal(true);
      expect(stats.max).to.equal(6);
      expect(performance.now() - started).to.be.lessThan(6 * 15);
    });

    it('runs at most maxConcurrency calls at once; the others wait in order', async () => {
      const { toolset, stats } = measured({ maxConcurrency: 2 });
      const pending = Array.from({ length: 6 }, () => run(toolset, 't', null));
      await sleep(0);
      expect(toolset.running).to.equal(2);
      expect(toolset.queued).to.equal(4);
      const results = await Promise.all(pending);
      expect(results.map((r) => r.returnValue.output)).to.deep.equal(Array(6).fill('done'));
      expect(stats.max).to.equal(2);
      expect(stats.started).to.equal(6);
      expect(toolset.running).to.equal(0);
      expect(toolset.queued).to.equal(0);
    });

    it('the limit is shared by every step using the toolset', async () => {
      const { toolset, stats } = measured({ maxConcurrency: 3 });
      const stepA = new AbortController();
      const stepB = new AbortController();
      await Promise.all([...Array.from({ length: 4 }, () => run(toolset, 't', null, stepA)), ...Array.from({ length: 4 }, () => run(toolset, 't', null, stepB))]);
      expect(stats.max).to.equal(3);
    });
  });

  describe('abort', () => {
    it('a call aborted while queued never runs and gets its error result at once', async () => {
      const release = deferred();
      const ran: string[] = [];
      const toolset = new SimpleToolset(
        [
          tool(async () => {
            ran.push('blocker');
            await release.promise;
            return 'blocker done';
          }, {}, 'blocker'),
          tool(() => {
            ran.push('queued');
            return 'queued done';
          }, {}, 'queued'),
        ],
        { maxConcurrency: 1 },
      );
      const first = run(toolset, 'blocker', null);
      const stepB = new AbortController();
      const second = run(toolset, 'queued', null, stepB);
      const third = run(toolset, 'queued', null);
      await sleep(0);
      expect(toolset.queued).to.equal(2);
      stepB.abort(new Error('user pressed stop'));
      const abortedResult = await second; // while the blocker still holds the only slot
      expect(abortedResult.returnValue).to.deep.equal(
        toolError({ message: 'Tool call was not executed: the call was aborted before it started (user pressed stop)', brief: 'Not executed' }),
      );
      expect(toolset.queued).to.equal(1);
      expect(ran).to.deep.equal(['blocker']);
      release.resolve();
      expect((await first).returnValue.output).to.equal('blocker done');
      expect((await third).returnValue.output).to.equal('queued done');
      expect(ran).to.deep.equal(['blocker', 'queued']);
    });

    it('a call whose signal is already aborted is not run (answered synchronously)', () => {
      let ran = false;
      const toolset = new SimpleToolset([tool(() => ((ran = true), 'x'))]);
      const controller = new AbortController();
      controller.abort(new Error('too late'));
      const c = call('t', null);
      const result = toolset.handle(c, contextFor(c, controller)) as ToolResult;
      expect(result.returnValue.message).to.equal('Tool call was not executed: the call was aborted before it started (too late)');
      expect(ran).to.equal(false);
    });

    it('a running call sees the step abort through its signal and gets an aborted result', async () => {
      let seen: AbortSignal | undefined;
      const toolset = new SimpleToolset([
        tool(async (context) => {
          seen = context.signal;
          await aborted(context.signal);
          throw context.signal.reason;
        }),
      ]);
      const step = new AbortController();
      const pending = run(toolset, 't', null, step);
      await sleep(5);
      const reason = new Error('step cancelled');
      step.abort(reason);
      const result = await pending;
      expect(result.returnValue).to.deep.equal(toolError({ message: 'Tool `t` was cancelled: step cancelled', brief: 'Cancelled' }));
      expect(seen?.aborted).to.equal(true);
      expect(seen?.reason).to.equal(reason);
      expect(seen).to.not.equal(step.signal);
    });

    it('after a step abort the result comes when the tool settles (so the step can report a tool that ignores its signal)', async () => {
      const finish = deferred<string>();
      const toolset = new SimpleToolset([tool(() => finish.promise, { timeoutMs: 20 })]);
      const step = new AbortController();
      const pending = run(toolset, 't', null, step);
      await sleep(1);
      step.abort(new Error('stop'));
      await sleep(40); // past the timeout: after an abort the step governs, not the timeout
      expect(await isSettled(pending)).to.equal(false);
      finish.resolve('late success');
      expect((await pending).returnValue.message).to.equal('Tool `t` was cancelled: stop');
    });

    it('gives execute the call and the step id, with a signal of its own', async () => {
      let context: ToolContext | undefined;
      const toolset = new SimpleToolset([tool((c) => ((context = c), 'ok'))]);
      const c = call('t', '{}');
      const outer = contextFor(c);
      await toolset.handle(c, outer);
      expect(context?.toolCall).to.equal(c);
      expect(context?.stepId).to.equal('step-1');
      expect(context?.signal).to.be.instanceOf(AbortSignal);
      expect(context?.signal).to.not.equal(outer.signal);
      expect(context?.signal.aborted).to.equal(false);
    });
  });

  describe('timeout', () => {
    it('aborts the signal of a tool that honours it, and tells the model it timed out', async () => {
      let reason: unknown;
      const toolset = new SimpleToolset([
        tool(async (context) => {
          await aborted(context.signal);
          reason = context.signal.reason;
          throw context.signal.reason;
        }),
      ], { timeoutMs: 30 });
      const started = performance.now();
      const result = await run(toolset, 't', null);
      const elapsed = performance.now() - started;
      expect(result.returnValue).to.deep.equal(
        toolError({
          message: 'Tool `t` timed out after 30 ms. You may try again with a smaller request, or tell the user the tool is slow.',
          brief: 'Timed out after 30 ms',
        }),
      );
      // Not before the timeout; after it, soon (a hang would be the test's own timeout; a loaded machine adds up to ~1 s).
      expect(elapsed).to.be.within(25, 1_000);
      expect(reason).to.be.instanceOf(DOMException);
      expect((reason as DOMException).name).to.equal('TimeoutError');
    });

    it('does not wait beyond the timeout for a tool that ignores its signal; its late rejection is handled', async () => {
      const finished = deferred();
      const toolset = new SimpleToolset([
        tool(
          async () => {
            try {
              await sleep(80);
              throw new Error('late failure');
            } finally {
              finished.resolve();
            }
          },
          { timeoutMs: 20 },
        ),
      ]);
      const started = performance.now();
      const result = await run(toolset, 't', null);
      expect(performance.now() - started).to.be.lessThan(70);
      expect(result.returnValue.message).to.match(/^Tool `t` timed out after 20 ms/);
      expect(toolset.running).to.equal(1); // still running, ignoring its signal
      await finished.promise;
      await sleep(0);
      expect(toolset.running).to.equal(0);
      // the root hook fails this test if the late rejection went unhandled
    });

    it('a timed-out tool that ignores its signal keeps its concurrency slot until it settles', async () => {
      const order: string[] = [];
      const toolset = new SimpleToolset(
        [
          tool(async () => {
            await sleep(60);
            order.push('stubborn settled');
            return 'ignored';
          }, { timeoutMs: 10 }, 'stubborn'),
          tool(() => (order.push('next started'), 'next'), {}, 'next'),
        ],
        { maxConcurrency: 1 },
      );
      const first = run(toolset, 'stubborn', null);
      const second = run(toolset, 'next', null);
      expect((await first).returnValue.message).to.match(/timed out after 10 ms/);
      expect(order).to.deep.equal([]);
      expect((await second).returnValue.output).to.equal('next');
      expect(order).to.deep.equal(['stubborn settled', 'next started']);
    });

    it('a tool overrides the toolset default; Infinity means no timeout', async () => {
      const slow = (name: string, extra: ToolLimits = {}) => tool(async () => (await sleep(50), 'finished'), extra, name);
      const toolset = new SimpleToolset(
        [slow('default'), slow('unlimited', { timeoutMs: Infinity }), slow('longer', { timeoutMs: 500 }), slow('beyond timers', { timeoutMs: 2 ** 32 })],
        { timeoutMs: 15 },
      );
      const [byDefault, unlimited, longer, beyond] = await Promise.all(['default', 'unlimited', 'longer', 'beyond timers'].map((name) => run(toolset, name, null)));
      expect(beyond!.returnValue.output).to.equal('finished'); // setTimeout would fire at once for > 2^31-1 ms
      expect(byDefault!.returnValue.message).to.match(/^Tool `default` timed out after 15 ms/);
      expect(unlimited!.returnValue.output).to.equal('finished');
      expect(longer!.returnValue.output).to.equal('finished');
    });

    it('the timeout counts from the start of the call, not while it waits for a slot', async () => {
      const toolset = new SimpleToolset([tool(async () => (await sleep(30), 'done'), { timeoutMs: 45 })], { maxConcurrency: 1 });
      const results = await Promise.all([run(toolset, 't', null), run(toolset, 't', null)]);
      expect(results.map((r) => r.returnValue.output)).to.deep.equal(['done', 'done']);
    });
  });

  describe('output cap (maxOutputChars)', () => {
    const returning = (value: string | ToolReturnValue, extra: ToolLimits = {}) => tool(() => value, extra);

    it('cuts a string output and tells the model', async () => {
      const result = await run(new SimpleToolset([returning('abcdefghijklmnop')], { maxOutputChars: 10 }), 't', null);
      expect(result.returnValue).to.deep.equal(toolOk({ output: `abcdefghij\n\n${truncationNote(16, 10)}` }));
      expect(truncationNote(16, 10)).to.equal(
        '[Output truncated: the tool returned 16 characters of text, more than the limit of 10; only the first 10 are shown. Ask for less (a narrower query, a range, a page) to see the rest.]',
      );
    });

    it('counts text parts in order, cuts the one that crosses the limit, drops later text, keeps media', async () => {
      const image = imageURLPart('https://example.com/a.png');
      const value = toolOk({ output: [textPart('hello '), image, textPart('world!!'), textPart('more')], message: 'm', brief: 'b' });
      const result = await run(new SimpleToolset([returning(value)], { maxOutputChars: 10 }), 't', null);
      expect(result.returnValue).to.deep.equal({
        ...value,
        output: [textPart('hello '), image, textPart('worl'), textPart(truncationNote(17, 10))],
      });
    });

    it('never splits a surrogate pair', async () => {
      const result = await run(new SimpleToolset([returning('😀😀😀')], { maxOutputChars: 3 }), 't', null);
      expect(result.returnValue.output).to.equal(`😀\n\n${truncationNote(6, 3)}`);
    });

    it('leaves output within the limit as it is; a tool may lift or lower the cap; error outputs are capped too', async () => {
      const value = toolOk({ output: 'short' });
      const toolset = new SimpleToolset(
        [
          tool(() => value, {}, 'short'),
          tool(() => 'x'.repeat(50), { maxOutputChars: Infinity }, 'lifted'),
          tool(() => 'x'.repeat(50), { maxOutputChars: 5 }, 'lowered'),
          tool(() => toolError({ message: 'failed', brief: 'b', output: 'y'.repeat(50) }), {}, 'failing'),
        ],
        { maxOutputChars: 20 },
      );
      expect((await run(toolset, 'short', null)).returnValue).to.equal(value);
      expect((await run(toolset, 'lifted', null)).returnValue.output).to.equal('x'.repeat(50));
      expect((await run(toolset, 'lowered', null)).returnValue.output).to.equal(`xxxxx\n\n${truncationNote(50, 5)}`);
      const failing = (await run(toolset, 'failing', null)).returnValue;
      expect(failing.isError).to.equal(true);
      expect(failing.message).to.equal('failed');
      expect(failing.output).to.equal(`${'y'.repeat(20)}\n\n${truncationNote(50, 20)}`);
    });
  });
});
