import {
  Agent,
  ContextFileError,
  LinearContext,
  ResumeConflictError,
  ContextCorruptedError,
  requireApproval,
  step,
  textPart,
  toolCall,
  toolOk,
  APIConnectionError,
  Kernel,
  definePlugin,
  type AgentContext,
  type ChatProvider,
  type Message,
  type StreamedMessage,
  type Toolset,
} from '@kosong/core';
import { OpenStepState, callRecordFromJSON, callRecordToJSON, type CallRecord } from '@kosong/core/context-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode, until, type Child } from './child-process.js';

const CHILD = fileURLToPath(new URL('./fixtures/ledger-child.js', import.meta.url));

function start(config: Record<string, unknown>): Child {
  return startNode(CHILD, [JSON.stringify(config)]);
}

/** The tool's own marker lines (`<pid> <idempotencyKey>`), one per time it ran. */
function markerLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const INTERRUPTED = /Tool call was interrupted: it started, but its outcome was never recorded/;

function toolTexts(history: readonly Message[]): string[] {
  return history.filter((m) => m.role === 'tool').map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
}

async function restored(path: string): Promise<LinearContext> {
  const context = new LinearContext(path);
  await context.restore();
  return context;
}

/** A model that calls `act` (`c1`) until the history has a tool result, then answers. */
function actModel(): ChatProvider & { readonly requests: number } {
  let requests = 0;
  const provider = {
    name: 'plan',
    modelName: 'plan',
    thinkingEffort: undefined,
    generation: {},
    get requests() {
      return requests;
    },
    generate(...args: Parameters<ChatProvider['generate']>) {
      requests++;
      const done = args[2].some((m) => m.role === 'tool');
      const mock = done ? new MockChatProvider([textPart('Done.')]) : new MockChatProvider([textPart('Acting.'), toolCall('c1', 'act', '{}')], { finishReason: 'tool_calls' });
      return mock.generate(...args);
    },
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

/**
 * A model whose first response streams a call to `act` and then breaks (a retryable connection
 * error) once `beforeBreak` resolves; after a tool result it answers. `requests` counts its calls.
 */
function breakingModel(beforeBreak: () => Promise<unknown>): ChatProvider & { readonly requests: number } {
  let requests = 0;
  const provider = {
    name: 'flaky',
    modelName: 'flaky',
    thinkingEffort: undefined,
    generation: {},
    get requests() {
      return requests;
    },
    async generate(...args: Parameters<ChatProvider['generate']>): Promise<StreamedMessage> {
      requests++;
      if (args[2].some((m) => m.role === 'tool')) return new MockChatProvider([textPart('Done.')]).generate(...args);
      // The call is complete (a part follows it), the tool runs, then the connection breaks.
      const inner = await new MockChatProvider([textPart('Acting.'), toolCall('c1', 'act', '{}'), textPart(' and')]).generate(...args);
      return {
        ...inner,
        async *[Symbol.asyncIterator]() {
          for await (const part of inner) yield part;
          await beforeBreak();
          throw new APIConnectionError('connection reset');
        },
      };
    },
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

/** A tool `act` that appends its idempotency key to `marker` and answers `acted`. */
function actTools(marker: string, extra: Partial<Toolset> = {}): Toolset {
  return {
    tools: [{ name: 'act', description: 'Has an effect.', parameters: { type: 'object' } }],
    handle(call, { idempotencyKey }) {
      appendFileSync(marker, `${process.pid} ${idempotencyKey}\n`);
      return { toolCallId: call.id, returnValue: toolOk({ output: 'acted' }) };
    },
    ...extra,
  };
}

describe('the call ledger', () => {
  let dir: string;
  let session: string;
  let marker: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-ledger-'));
    session = join(dir, 'session.jsonl');
    marker = join(dir, 'marker.log');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('in the JSONL file', () => {
    it('records each call before it runs and its outcome after, as lines other readers skip; the step then closes them', async () => {
      const context = new LinearContext(session);
      const agent = new Agent({ systemPrompt: '', context, step: (options) => step({ ...options, provider: actModel(), toolset: actTools(marker) }) });
      const result = await agent.run('Act.', { turn: { id: 'turn-1' } });
      await context.close();
      expect(result.stopReason).to.equal('no_tool_calls');
      const lines = (await readFile(session, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => line['role'])).to.deep.equal(['user', '_call_started', '_call_settled', 'assistant', 'tool', 'assistant']);
      expect(lines[1]).to.deep.include({ step_key: 'turn-1/1', index: 0, token_count: 0, content_from: 0, calls_from: 0 });
      expect(lines[2]).to.deep.include({ step_key: 'turn-1/1', index: 0 });
      // The tool saw the stable key of its call: turn, step of the turn, index.
      expect(markerLines(marker).map((line) => line.split(' ')[1])).to.deep.equal(['turn-1/1/0']);
      // The records are history once the step is: a new context has no open step.
      const again = await restored(session);
      expect(again.openStep).to.equal(undefined);
      expect(again.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      await again.close();
    });

    it('records calls of tools that are safe to run again too (so a redo gives them the same key), without a sync of their own', async () => {
      const syncs: boolean[] = [];
      for (const [name, policy] of [['safe.jsonl', 'safe'], ['never.jsonl', undefined]] as const) {
        const context = new LinearContext(join(dir, name));
        const recordStart = context.recordStart.bind(context);
        context.recordStart = (record, options) => (syncs.push(options?.sync !== false), recordStart(record, options));
        const toolset = actTools(marker, policy === undefined ? {} : { replayPolicy: () => policy });
        await new Agent({ systemPrompt: '', context, step: (options) => step({ ...options, provider: actModel(), toolset }) }).run('Act.');
        await context.close();
        const roles = (await readFile(join(dir, name), 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { role: string }).role);
        expect(roles).to.deep.equal(['user', '_call_started', '_call_settled', 'assistant', 'tool', 'assistant']);
      }
      expect(syncs).to.deep.equal([false, true]);
    });

    it('syncCallStarts: false writes every start without a sync', async () => {
      const context = new LinearContext(session, { syncCallStarts: false });
      const agent = new Agent({ systemPrompt: '', context, step: (options) => step({ ...options, provider: actModel(), toolset: actTools(marker) }) });
      await agent.run('Act.');
      await context.close();
      const roles = (await readFile(session, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { role: string }).role);
      expect(roles).to.deep.equal(['user', '_call_started', '_call_settled', 'assistant', 'tool', 'assistant']);
    });

    it('a file ending with a start record restores its open step; a record that does not follow is a corrupted file, left as it was', async () => {
      const start = { role: '_call_started', token_count: 0, step_key: 't/1', index: 0, content_from: 0, calls_from: 0 };
      const delta = { role: 'assistant', content: 'Acting.', tool_calls: [{ type: 'function', id: 'c1', function: { name: 'act', arguments: '{}' } }] };
      await writeFile(session, `{"role":"user","content":"Act."}\n${JSON.stringify({ ...start, delta })}\n`);
      const context = await restored(session);
      expect(context.openStep).to.deep.equal({
        key: 't/1',
        message: { role: 'assistant', content: [textPart('Acting.')], toolCalls: [toolCall('c1', 'act', '{}')] },
        calls: [{ started: true, result: undefined }],
      });
      await context.close();

      const bad = `{"role":"user","content":"Act."}\n${JSON.stringify({ ...start, content_from: 3, delta })}\n`;
      await writeFile(session, bad);
      const error = await new LinearContext(session).restore().catch((e: unknown) => e);
      expect(error).to.satisfy(ContextCorruptedError.isInstance);
      expect((error as ContextCorruptedError).line).to.equal(2);
      expect((error as Error).message).to.match(/continues the message at part 3/);
      expect(await readFile(session, 'utf8')).to.equal(bad);
    });

    describe('syncs to disk', () => {
      /** What the history's file handles do, in order: `write` (lines of the JSONL roles written) or `sync`. */
      let ops: string[];
      let restoreProto: () => void;
      beforeEach(async () => {
        ops = [];
        const scratch = await open(join(dir, 'scratch'), 'w');
        const proto = Object.getPrototypeOf(scratch) as { write(...args: unknown[]): Promise<unknown>; datasync(): Promise<void> };
        await scratch.close();
        const { write, datasync } = proto;
        proto.write = function (this: unknown, ...args: unknown[]) {
          const bytes = args[0];
          if (bytes instanceof Uint8Array) {
            const roles = Buffer.from(bytes).toString('utf8').trim().split('\n').map((line) => (JSON.parse(line) as { role: string }).role);
            ops.push(`write ${roles.join(' ')}`);
          }
          return write.apply(this, args);
        };
        proto.datasync = function (this: unknown) {
          ops.push('sync');
          return datasync.apply(this);
        };
        restoreProto = () => Object.assign(proto, { write, datasync });
      });
      afterEach(() => restoreProto());

      /** A model streaming two calls to `act` in one response, then answering. */
      function twoCallModel(): ChatProvider {
        const provider: ChatProvider = {
          name: 'two',
          modelName: 'two',
          thinkingEffort: undefined,
          generation: {},
          generate(...args) {
            const done = args[2].some((m) => m.role === 'tool');
            const mock = done
              ? new MockChatProvider([textPart('Done.')])
              : new MockChatProvider([textPart('Acting.'), toolCall('c1', 'act', '{}'), toolCall('c2', 'act', '{}')], { finishReason: 'tool_calls' });
            return mock.generate(...args);
          },
          withThinking: () => provider,
          withGeneration: () => provider,
        };
        return provider;
      }

      it("once before the calls of a chunk run (both starts in one write), not for the step's own append, and for the answer", async () => {
        const context = new LinearContext(session);
        const agent = new Agent({ systemPrompt: '', context, step: (options) => step({ ...options, provider: twoCallModel(), toolset: actTools(marker) }) });
        await agent.run('Act.');
        expect(ops).to.deep.equal([
          'write user',
          'sync',
          'write _call_started _call_started',
          'sync',
          'write _call_settled _call_settled assistant tool tool',
          'write assistant',
          'sync',
        ]);
        expect(markerLines(marker)).to.have.length(2);
        await context.close();
        expect(ops.slice(7)).to.deep.equal([]); // nothing left to sync at close
      });

      it('a turn that ends on a step with calls (max steps) syncs that step before it returns', async () => {
        const context = new LinearContext(session);
        const agent = new Agent({ systemPrompt: '', context, maxSteps: 1, step: (options) => step({ ...options, provider: twoCallModel(), toolset: actTools(marker) }) });
        const result = await agent.run('Act.');
        expect(result.stopReason).to.equal('max_steps');
        expect(ops.slice(-2)).to.deep.equal(['write _call_settled _call_settled assistant tool tool', 'sync']);
        await context.close();
        const again = await restored(session);
        expect(again.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool']);
        await again.close();
      });

      it('close() syncs what an append wrote without a sync; flush() with nothing unsynced syncs nothing', async () => {
        const context = new LinearContext(session);
        await context.append({ role: 'user', content: [textPart('Act.')] });
        const message: Message = { role: 'assistant', content: [textPart('Acting.')], toolCalls: [toolCall('c1', 'act', '{}')] };
        await context.recordStart({ type: 'start', key: 't/1', index: 0, contentFrom: 0, content: message.content, callsFrom: 0, toolCalls: message.toolCalls! });
        await context.append(message, { role: 'tool', toolCallId: 'c1', content: [textPart('acted')] });
        expect(ops).to.deep.equal(['write user', 'sync', 'write _call_started', 'sync', 'write assistant tool']);
        await context.flush();
        expect(ops.slice(5)).to.deep.equal(['sync']);
        await context.flush();
        expect(ops.slice(6)).to.deep.equal([]);
        await context.recordStart({ type: 'start', key: 't/2', index: 0, contentFrom: 0, content: message.content, callsFrom: 0, toolCalls: message.toolCalls! });
        await context.append(message, { role: 'tool', toolCallId: 'c1', content: [textPart('acted')] });
        await context.close();
        expect(ops.slice(6)).to.deep.equal(['write _call_started', 'sync', 'write assistant tool', 'sync']);
      });
    });

    it('a call whose start cannot be recorded does not run: the model is told so', async () => {
      const context = new LinearContext();
      const failing: AgentContext = Object.create(context, {
        ledger: {
          value: {
            get openStep() {
              return undefined;
            },
            recordStart: () => Promise.reject(new Error('disk on fire')),
            recordOutcome: () => Promise.resolve(),
          },
        },
      }) as AgentContext;
      const agent = new Agent({ systemPrompt: '', context: failing, step: (options) => step({ ...options, provider: actModel(), toolset: actTools(marker) }) });
      await agent.run('Act.');
      expect(markerLines(marker)).to.deep.equal([]);
      expect(toolTexts(context.history)).to.deep.equal(['<system>ERROR: Tool call was not executed: its start could not be recorded in the call ledger (disk on fire)</system>']);
    });
  });

  describe('a step redone in the same process (a retry)', () => {
    it('is completed from the ledger, not asked of the model again: the call that ran keeps its result and runs once', async () => {
      const provider = breakingModel(() => new Promise((resolve) => setTimeout(resolve, 20)));
      const context = new LinearContext(session);
      const events: string[] = [];
      const agent = new Agent({ systemPrompt: '', context, retry: { initialDelayMs: 1, maxDelayMs: 1, jitterMs: 0 }, step: (options) => step({ ...options, provider, toolset: actTools(marker) }) });
      const result = await agent.run('Act.', { onEvent: (e) => void events.push(e.type) });
      await context.close();
      expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
      expect(markerLines(marker)).to.have.length(1);
      expect(provider.requests).to.equal(2); // step 1 once (its retry came from the ledger), step 2 once
      expect(events.filter((e) => e === 'retry')).to.have.length(1);
      const history = (await restored(session)).history;
      expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      expect(history[1]!.toolCalls?.map((c) => c.id)).to.deep.equal(['c1']);
      expect(toolTexts(history)).to.deep.equal(['acted']);
    });
  });

  describe('a step redone in the same process, its call still running when the request failed', () => {
    it("the call is aborted with the step and, being 'never', comes back to the model as interrupted: it ran once", async () => {
      const provider = breakingModel(() => until(() => markerLines(marker).length > 0, 'the tool to start'));
      const slow = actTools(marker);
      const toolset: Toolset = {
        ...slow,
        async handle(call, context) {
          slow.handle(call, context);
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
          return { toolCallId: call.id, returnValue: toolOk({ output: 'aborted late' }) };
        },
      };
      const context = new LinearContext();
      const agent = new Agent({ systemPrompt: '', context, retry: { initialDelayMs: 1, maxDelayMs: 1, jitterMs: 0 }, step: (options) => step({ ...options, provider, toolset }) });
      const result = await agent.run('Act.');
      expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
      expect(provider.requests).to.equal(2);
      expect(markerLines(marker)).to.have.length(1);
      expect(toolTexts(context.history)[0]).to.match(INTERRUPTED);
    });
  });

  describe("step({ resume }) with an interrupted call: its tool's replay policy decides", () => {
    const message: Message = { role: 'assistant', content: [textPart('Acting.')], toolCalls: [toolCall('c1', 'act', '{}')] };
    async function redo(policy: 'never' | 'safe' | 'ask', onApproval?: Parameters<typeof step>[0]['onApproval']) {
      const requests: unknown[] = [];
      const result = await step({
        provider: actModel(),
        systemPrompt: '',
        history: [],
        toolset: actTools(marker, { replayPolicy: () => policy }),
        resume: { message, results: [undefined], entries: ['interrupted'] },
        hooks: [{ name: 'spy', hooks: { onApprovalRequest: (e) => void requests.push({ replay: e.replay, index: e.index }) } }],
        ...(onApproval ? { onApproval } : {}),
      });
      return { results: await result.toolResults(), requests };
    }

    it("'never': the interrupted error result, the tool not called", async () => {
      const { results, requests } = await redo('never');
      expect(results[0]!.returnValue.message).to.match(INTERRUPTED);
      expect(results[0]!.returnValue.isError).to.equal(true);
      expect(markerLines(marker)).to.deep.equal([]);
      expect(requests).to.deep.equal([]);
    });

    it("'safe': run again without a question", async () => {
      const { results, requests } = await redo('safe');
      expect(results[0]!.returnValue.output).to.equal('acted');
      expect(markerLines(marker)).to.have.length(1);
      expect(requests).to.deep.equal([]);
    });

    it("'ask': the handler and the hooks are told it is a replay; a denial keeps the tool from running", async () => {
      const asked: unknown[] = [];
      const { results, requests } = await redo('ask', (request) => (asked.push(request.replay), { type: 'deny', reason: 'not again' }));
      expect(asked).to.deep.equal([true]);
      expect(requests).to.deep.equal([{ replay: true, index: 0 }]);
      expect(results[0]!.returnValue.message).to.equal('The tool call was denied: not again');
      expect(markerLines(marker)).to.deep.equal([]);
    });

    it('refuses entries that are not aligned with the calls, or not entries', async () => {
      for (const entries of [[], ['maybe']] as never[]) {
        const error = await step({ provider: actModel(), systemPrompt: '', history: [], toolset: actTools(marker), resume: { message, results: [undefined], entries } }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(TypeError);
      }
    });
  });

  describe('records', () => {
    it('round-trip through their wire form; an outcome of a call never run makes it a call that never started', () => {
      const records: CallRecord[] = [
        { type: 'start', key: 'k/1', index: 0, contentFrom: 0, content: [textPart('Acting.')], callsFrom: 0, toolCalls: [toolCall('c1', 'act', '{}'), toolCall('c2', 'act', '{"n":2}')] },
        { type: 'start', key: 'k/1', index: 1, contentFrom: 1, content: [], callsFrom: 2, toolCalls: [] },
        { type: 'outcome', key: 'k/1', index: 0, result: { toolCallId: 'c1', returnValue: toolOk({ output: 'acted' }) } },
        { type: 'outcome', key: 'k/1', index: 1, result: { toolCallId: 'c2', returnValue: toolOk({ output: 'no' }) }, ran: false },
      ];
      const state = new OpenStepState();
      for (const record of records) {
        const back = callRecordFromJSON(JSON.parse(JSON.stringify(callRecordToJSON(record, 7))));
        expect(back).to.deep.equal(record);
        state.apply(back);
      }
      expect(state.openStep!.calls).to.deep.equal([
        { started: true, result: { toolCallId: 'c1', returnValue: toolOk({ output: 'acted' }) } },
        { started: false, result: undefined },
      ]);
      expect(() => state.apply({ ...records[0]!, key: 'other/1' } as CallRecord)).to.throw(/starts while step "k\/1" is open/);
      expect(() => new OpenStepState().apply(records[2]!)).to.throw(/has no recorded start/);
      expect(() => callRecordFromJSON({ ...callRecordToJSON(records[3]!, 0), ran: true })).to.throw(/ran must be false/);
    });
  });

  describe('through the kernel', () => {
    it("kernel.agent() hands its steps the context's ledger: a call's start and outcome are in the file", async () => {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'act', setup: (ctx) => (ctx.bindChatProvider('plan', actModel(), { default: true }), ctx.bindToolset(actTools(marker))) }));
      const context = new LinearContext(session);
      await kernel.agent({ systemPrompt: '', context }).run('Act.', { turn: { id: 'k-turn' } });
      await context.close();
      const roles = (await readFile(session, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { role: string }).role);
      expect(roles).to.deep.equal(['user', '_call_started', '_call_settled', 'assistant', 'tool', 'assistant']);
      expect(markerLines(marker).map((line) => line.split(' ')[1])).to.deep.equal(['k-turn/1/0']);
      await kernel.dispose();
    });
  });

  describe('resumes of one pending step at once', () => {
    async function deferred(): Promise<{ context: LinearContext; agent: () => Agent }> {
      const context = new LinearContext(session);
      const toolset = requireApproval(actTools(marker));
      const agent = (): Agent => new Agent({ systemPrompt: '', context, step: (options) => step({ ...options, provider: actModel(), toolset }) });
      const first = await agent().run('Act.');
      expect(first.stopReason).to.equal('approval_required');
      return { context, agent };
    }

    it('200 pairs in one process (approve/approve, approve/deny): one wins, the other is refused before anything runs, the file says what happened', async function () {
      this.timeout(120_000);
      for (let pair = 0; pair < 200; pair++) {
        await rm(session, { force: true });
        await rm(marker, { force: true });
        const { context, agent } = await deferred();
        const second = pair % 2 === 0 ? ({ type: 'approve' } as const) : ({ type: 'deny', reason: 'no' } as const);
        const outcomes = await Promise.allSettled([agent().resume({ decisions: { c1: { type: 'approve' } } }), agent().resume({ decisions: { c1: second } })]);
        expect(outcomes[0]!.status).to.equal('fulfilled');
        expect(outcomes[1]!.status).to.equal('rejected');
        expect((outcomes[1] as PromiseRejectedResult).reason).to.satisfy(ResumeConflictError.isInstance);
        await context.close();
        expect(markerLines(marker)).to.have.length(1);
        const lines = (await readFile(session, 'utf8')).split('\n').filter((line) => line.includes('"_step_resumed"'));
        expect(lines).to.have.length(1);
        const loaded = await restored(session);
        expect(loaded.pendingStep).to.equal(undefined);
        expect(toolTexts(loaded.history)).to.deep.equal(['acted']);
        await loaded.close();
      }
    });

    it('in two processes: the second cannot even load the session while the first holds it', async function () {
      this.timeout(180_000);
      const pairs = Number(process.env['KOSONG_LEDGER_PROCESS_PAIRS'] ?? 10);
      for (let pair = 0; pair < pairs; pair++) {
        await rm(session, { force: true });
        await rm(marker, { force: true });
        const { context } = await deferred();
        await context.close();
        const decisions = { c1: { type: 'approve' } };
        const other = pair % 2 === 0 ? decisions : { c1: { type: 'deny', reason: 'no' } };
        const [a, b] = [start({ mode: 'resume', session, marker, approval: true, decisions, sleepMs: 300 }), start({ mode: 'resume', session, marker, approval: true, decisions: other, sleepMs: 300 })];
        const codes = await Promise.all([a.exited, b.exited]);
        const outputs = [a.output(), b.output()];
        // Exactly one resumed it; the other was refused, at start or (if it came after) with nothing left to resume.
        expect(codes.filter((code) => code === 0), outputs.join('\n')).to.have.length(1);
        const refused = outputs[codes.findIndex((code) => code !== 0)]!;
        expect(refused, refused).to.match(/error (ContextFileError: .*the session is in use by process|NoPendingApprovalError)/);
        expect(markerLines(marker).length).to.be.at.most(1);
        const loaded = await restored(session);
        expect(loaded.pendingStep).to.equal(undefined);
        await loaded.close();
      }
    });
  });

  describe('a process killed while a call runs', () => {
    it("a 'never' tool: the next turn completes the step first, the model is told the call was interrupted, and the tool never runs again", async function () {
      this.timeout(30_000);
      const first = start({ mode: 'run', session, marker, sleepMs: 60_000 });
      await until(() => first.output().includes('tool-started'), 'the tool to start');
      first.child.kill('SIGKILL');
      await first.exited;

      const second = start({ mode: 'run', session, marker, input: 'Go on.' });
      expect(await second.exited).to.equal(0, second.output());
      expect(markerLines(marker)).to.have.length(1);
      const history = (await restored(session)).history;
      expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'user', 'assistant']);
      expect(toolTexts(history)[0]).to.match(INTERRUPTED);
      expect(history.at(-1)!.content[0]).to.deep.include({ text: `Done: ${toolTexts(history)[0]}` });
    });

    it("a 'safe' tool runs again when the step is completed, with the same idempotency key, and the turn completes", async function () {
      this.timeout(30_000);
      const first = start({ mode: 'run', session, marker, policy: 'safe', sleepMs: 60_000 });
      await until(() => first.output().includes('tool-started'), 'the tool to start');
      first.child.kill('SIGKILL');
      await first.exited;
      const second = start({ mode: 'run', session, marker, policy: 'safe', input: 'Go on.' });
      expect(await second.exited).to.equal(0, second.output());
      const lines = markerLines(marker);
      expect(lines).to.have.length(2);
      expect(lines[0]!.split(' ')[1]).to.equal(lines[1]!.split(' ')[1]); // the call's stable key, across processes
      const history = (await restored(session)).history;
      expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'user', 'assistant']);
      expect(toolTexts(history)).to.deep.equal(['acted']);
    });

    it("an 'ask' tool: the approval handler is asked with replay: true; approved, it runs again with the same key", async function () {
      this.timeout(30_000);
      const first = start({ mode: 'run', session, marker, policy: 'ask', sleepMs: 60_000 });
      await until(() => first.output().includes('tool-started'), 'the tool to start');
      first.child.kill('SIGKILL');
      await first.exited;
      const second = start({ mode: 'run', session, marker, policy: 'ask', approveReplays: true, input: 'Go on.' });
      expect(await second.exited).to.equal(0, second.output());
      expect(second.output()).to.include('replay-asked');
      const lines = markerLines(marker);
      expect(lines).to.have.length(2);
      expect(lines[0]!.split(' ')[1]).to.equal(lines[1]!.split(' ')[1]); // the call's stable key, across processes
      expect(toolTexts((await restored(session)).history)).to.deep.equal(['acted']);
    });

    it('an approved call killed while it runs is not run by the next resume: it gets the interrupted result, the session loads', async function () {
      this.timeout(30_000);
      const deferring = start({ mode: 'run', session, marker, approval: true });
      expect(await deferring.exited).to.equal(0, deferring.output());
      expect(deferring.output()).to.include('approval_required');
      const decisions = { c1: { type: 'approve' } };
      const resuming = start({ mode: 'resume', session, marker, approval: true, decisions, sleepMs: 60_000 });
      await until(() => resuming.output().includes('tool-started'), 'the approved tool to start');
      resuming.child.kill('SIGKILL');
      await resuming.exited;

      const again = start({ mode: 'resume', session, marker, approval: true, decisions });
      expect(await again.exited).to.equal(0, again.output());
      expect(markerLines(marker)).to.have.length(1);
      const loaded = await restored(session);
      expect(loaded.pendingStep).to.equal(undefined);
      expect(toolTexts(loaded.history)[0]).to.match(INTERRUPTED);
      await loaded.close();
    });
  });

  describe("the session's lock", () => {
    it('a second context on the same file, in this process, is refused with the holder named; after close it may', async () => {
      const first = await restored(session);
      const error = await new LinearContext(session).restore().catch((e: unknown) => e);
      expect(error).to.satisfy(ContextFileError.isInstance);
      expect(error).to.include({ problem: 'locked' });
      expect((error as Error).message).to.include(`process ${process.pid} on ${hostname()}`);
      expect((error as ContextFileError).holder).to.deep.include({ pid: process.pid, host: hostname() });
      await first.close();
      const second = await restored(session);
      await second.close();
    });

    it('a lock left by a process that died is taken over at once', async () => {
      const dead = spawn(process.execPath, ['-e', '0']);
      const pid = dead.pid!;
      await new Promise((resolve) => dead.on('close', resolve));
      await writeFile(`${session}.lock`, JSON.stringify({ pid, host: hostname(), token: 'old', since: new Date().toISOString() }));
      const started = Date.now();
      const context = await restored(session);
      expect(Date.now() - started).to.be.below(1_000);
      await context.append({ role: 'user', content: [textPart('mine now')] });
      await context.close();
    });

    it('a symbolic link where the lock would be is never followed', async () => {
      const target = join(dir, 'victim');
      await writeFile(target, 'precious');
      await symlink(target, `${session}.lock`);
      const error = await new LinearContext(session).restore().catch((e: unknown) => e);
      expect(error).to.satisfy(ContextFileError.isInstance);
      expect(await readFile(target, 'utf8')).to.equal('precious');
    });

    it('refuses an option it does not know', () => {
      expect(() => new LinearContext(session, { lok: false } as never)).to.throw(TypeError, /unknown option "lok"/);
    });
  });
});
