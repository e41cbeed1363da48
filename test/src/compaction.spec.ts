import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  CompactionError,
  ContextCorruptedError,
  LinearContext,
  providerSummarizer,
  step,
  textPart,
  toolCall,
  toolOk,
  tokenUsage,
  type ChatProvider,
  type CompactionOptions,
  type Message,
  type StreamedMessage,
  type StreamedMessagePart,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';

/** Tokens as the test's model counts them: characters / 4 of text and tool arguments (the rule the agent estimates with). */
function tokensOf(systemPrompt: string, history: readonly Message[]): number {
  let chars = systemPrompt.length;
  for (const message of history) {
    for (const part of message.content) if (part.type === 'text') chars += part.text.length;
    for (const call of message.toolCalls ?? []) chars += call.function.name.length + (call.function.arguments?.length ?? 0);
  }
  return Math.ceil(chars / 4);
}

/** Every tool message follows the assistant message that made its call, in call order. */
function pairsIntact(history: readonly Message[]): boolean {
  for (let i = 0; i < history.length; i++) {
    const calls = history[i]!.role === 'assistant' ? (history[i]!.toolCalls ?? []) : [];
    for (const [k, call] of calls.entries()) if (history[i + 1 + k]?.role !== 'tool' || history[i + 1 + k]?.toolCallId !== call.id) return false;
    if (history[i]!.role === 'tool') {
      let j = i;
      while (j > 0 && history[j]!.role === 'tool') j--;
      if (history[j]!.role !== 'assistant' || (history[j]!.toolCalls?.length ?? 0) < i - j) return false;
    }
  }
  return true;
}

const PADDING = 'x'.repeat(200);

/**
 * A scripted model for long sessions: a user message gets a `note` call, a tool result gets a short
 * answer. It counts every request's tokens (the largest one kept) and checks its tool pairs, and
 * reports usage as a provider does (input = the request, output = the answer).
 */
class CountingModel implements ChatProvider {
  readonly name = 'counting';
  readonly modelName = 'counting';
  readonly thinkingEffort = undefined;
  readonly generation = {};
  maxRequestTokens = 0;
  requests = 0;
  brokenPairs = 0;

  generate(systemPrompt: string, _tools: unknown, history: readonly Message[]): Promise<StreamedMessage> {
    this.requests++;
    const input = tokensOf(systemPrompt, history);
    this.maxRequestTokens = Math.max(this.maxRequestTokens, input);
    if (!pairsIntact(history) || history[0]?.role === 'tool') this.brokenPairs++;
    const last = history.at(-1)!;
    const parts: StreamedMessagePart[] =
      last.role === 'tool' ? [textPart(`Noted: ${PADDING.slice(0, 80)}`)] : [textPart('Noting.'), toolCall(`c${this.requests}`, 'note', JSON.stringify({ text: PADDING }))];
    const output = tokensOf('', [{ role: 'assistant', content: parts.filter((p) => p.type === 'text') as never }]);
    return new MockChatProvider(parts, { usage: tokenUsage({ inputOther: input, output }) }).generate('', [], []);
  }

  withThinking(): ChatProvider {
    return this;
  }

  withGeneration(): ChatProvider {
    return this;
  }
}

const noteToolset: Toolset = {
  tools: [{ name: 'note', description: 'Notes.', parameters: { type: 'object' } }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `noted ${PADDING}` }) }),
};

/** A summarizer that says how many messages it summarised (its text stays short, as a model's would). */
const countingSummarizer = (): CompactionOptions['summarizer'] & { calls: number; seen: (readonly Message[])[] } => {
  const summarize = Object.assign(
    (messages: readonly Message[]) => {
      summarize.calls++;
      summarize.seen.push(messages);
      return Promise.resolve(`summary #${summarize.calls} of ${messages.length} messages`);
    },
    { calls: 0, seen: [] as (readonly Message[])[] },
  );
  return summarize;
};

function agentOn(model: ChatProvider, context: LinearContext, compaction: CompactionOptions): Agent {
  return new Agent({ systemPrompt: 'You are a test.', step: (options) => step({ ...options, provider: model, toolset: noteToolset }), context, compaction });
}

describe('compaction (Agent, LinearContext)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kosong-compaction-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('a 2,000-turn scripted session never sends the model more than its window, and never splits a tool call from its result', async () => {
    const model = new CountingModel();
    const summarizer = countingSummarizer();
    const context = new LinearContext();
    const windowTokens = 3_000;
    const agent = agentOn(model, context, { windowTokens, threshold: 0.8, keepRecent: 6, summarizer });
    for (let turn = 0; turn < 2_000; turn++) {
      const result = await agent.run(`turn ${turn}: ${PADDING.slice(0, 60)}`);
      expect(result.stopReason).to.equal('no_tool_calls');
    }
    expect(model.requests).to.equal(4_000);
    expect(model.maxRequestTokens, 'the largest request').to.be.at.most(windowTokens);
    expect(model.brokenPairs, 'requests with a tool result apart from its call').to.equal(0);
    expect(summarizer.calls, 'compactions').to.be.greaterThan(100);
    // Each compaction summarised the summary before it with the turns after it, cut at a turn's start.
    summarizer.seen.slice(1).forEach((seen, i) => expect(JSON.stringify(seen[0]!.content), `compaction ${i + 2}`).to.include(`summary #${i + 1} of`));
    expect(summarizer.seen.every((seen: readonly Message[]) => seen.at(-1)!.role !== 'assistant' || (seen.at(-1)!.toolCalls?.length ?? 0) === 0)).to.equal(true);
    const history = context.history;
    expect(history[0]!.role).to.equal('user');
    expect(JSON.stringify(history[0]!.content)).to.include(`summary #${summarizer.calls} of`);
    expect(pairsIntact(history)).to.equal(true);
  });

  it('is one line in the file: restore gives the compacted history, and the lines it replaced stay in the file', async () => {
    const path = join(dir, 'session.jsonl');
    const summarizer = countingSummarizer();
    const context = new LinearContext(path);
    const agent = agentOn(new CountingModel(), context, { windowTokens: 100_000, summarizer });
    for (let turn = 0; turn < 3; turn++) await agent.run(`turn ${turn}`);
    expect(context.history).to.have.length(12);
    const compaction = await agent.compact({ force: true });
    expect(compaction).to.deep.include({ replaced: 4 }); // 3 turns of 4 messages; the last 6 kept, cut back to the start of the turn they begin in: the first turn goes
    expect(compaction!.tokensAfter).to.be.below(compaction!.tokensBefore);
    const compacted = context.history.slice();
    expect(compacted).to.have.length(9);
    await context.close();

    const restored = new LinearContext(path);
    await restored.restore();
    expect(restored.history).to.deep.equal(compacted);
    await restored.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines.filter((line) => line.includes('"role":"user"') && line.includes('turn 0')), 'the original first turn').to.have.length(1);
    expect(JSON.parse(lines.at(-1)!)).to.deep.include({ role: '_compaction', replaces: 4 });
  });

  it('a crash while the compaction is written (the line cut at any byte) restores the old history; the whole line, the new one — never a mix', async () => {
    const path = join(dir, 'session.jsonl');
    const context = new LinearContext(path);
    const agent = agentOn(new CountingModel(), context, { windowTokens: 100_000, summarizer: countingSummarizer() });
    for (let turn = 0; turn < 3; turn++) await agent.run(`turn ${turn}`);
    const before = context.history.slice();
    const sizeBefore = readFileSync(path).length;
    await agent.compact({ force: true });
    const after = context.history.slice();
    await context.close();
    const whole = readFileSync(path);
    let cuts = 0;
    for (let size = sizeBefore + 1; size < whole.length - 1; size += 13) {
      writeFileSync(path, whole);
      truncateSync(path, size);
      const restored = new LinearContext(path);
      const report = await restored.restore();
      expect(restored.history, `cut at byte ${size}`).to.deep.equal(before);
      expect(report.recoveredTornLine, `cut at byte ${size}`).to.equal(true);
      await restored.close();
      cuts++;
    }
    expect(cuts).to.be.greaterThan(5);
    writeFileSync(path, whole.subarray(0, whole.length - 1)); // the newline lost: still the whole record
    const restored = new LinearContext(path);
    await restored.restore();
    expect(restored.history).to.deep.equal(after);
    await restored.close();
  });

  it('a file whose compaction replaces more messages than it has is a corrupted session', async () => {
    const path = join(dir, 'session.jsonl');
    writeFileSync(
      path,
      `${JSON.stringify({ role: 'user', content: 'hi' })}\n${JSON.stringify({ role: '_compaction', token_count: 0, replaces: 2, summary: { role: 'user', content: 'summary' } })}\n`,
    );
    const context = new LinearContext(path);
    const error = await context.restore().catch((e: unknown) => e);
    expect(ContextCorruptedError.isInstance(error), String(error)).to.equal(true);
    expect(String(error)).to.match(/line 2.*replaces 2 messages of a history of 1/);
  });

  it('a summarizer that fails (or says nothing) is a CompactionError, and the history is unchanged', async () => {
    for (const summarizer of [() => Promise.reject(new Error('model down')), () => Promise.resolve('  ')]) {
      const context = new LinearContext();
      const model = new CountingModel();
      const agent = agentOn(model, context, { windowTokens: 300, summarizer });
      await agent.run('one'); // fits: no compaction yet
      const before = context.history.slice();
      const error = await agent.run(`two ${PADDING}${PADDING}`).catch((e: unknown) => e);
      expect(CompactionError.isInstance(error), String(error)).to.equal(true);
      expect(String(error)).to.match(/model down|no summary text/);
      expect(context.history.slice(0, before.length)).to.deep.equal(before);
      expect(context.history.every((m) => !JSON.stringify(m.content).includes('Summary of the earlier'))).to.equal(true);
    }
  });

  it('refuses bad options when the agent is made, and a context that cannot compact', async () => {
    const make = (compaction: unknown, context: LinearContext | object = new LinearContext()) => () =>
      new Agent({ systemPrompt: '', step: () => Promise.reject(new Error('unused')), context: context as LinearContext, compaction: compaction as CompactionOptions });
    const summarizer = countingSummarizer();
    expect(make({ windowTokens: 1000, summarizer, keepRecnt: 2 })).to.throw(TypeError, /unknown option "keepRecnt"/);
    expect(make({ windowTokens: 0, summarizer })).to.throw(TypeError, /windowTokens must be a positive integer/);
    expect(make({ windowTokens: Number.NaN, summarizer })).to.throw(TypeError, /windowTokens/);
    expect(make({ windowTokens: 1000, threshold: 1.5, summarizer })).to.throw(TypeError, /threshold/);
    expect(make({ windowTokens: 1000, keepRecent: -1, summarizer })).to.throw(TypeError, /keepRecent/);
    expect(make({ windowTokens: 1000 })).to.throw(TypeError, /summarizer must be a function/);
    expect(make('big')).to.throw(TypeError, /compaction must be an object/);
    const noCompact = { history: [], tokenCount: 0, pendingStep: undefined, append: () => Promise.resolve(), restore: () => Promise.resolve({ messages: 0 }) };
    expect(make({ windowTokens: 1000, summarizer }, noCompact)).to.throw(TypeError, /needs a context that can compact/);
    expect(String(await new Agent({ systemPrompt: '', step: () => Promise.reject(new Error('unused')) }).compact().catch((e: unknown) => e))).to.match(/TypeError.*no compaction options/);
  });

  it('compacts nothing while a step waits for approval', async () => {
    const context = new LinearContext();
    const summarizer = countingSummarizer();
    const gated: Toolset = { ...noteToolset, needsApproval: () => true };
    const agent = new Agent({ systemPrompt: '', step: (options) => step({ ...options, provider: new CountingModel(), toolset: gated }), context, compaction: { windowTokens: 10, summarizer } });
    const result = await agent.run('hello');
    expect(result.stopReason).to.equal('approval_required');
    expect(await agent.compact({ force: true })).to.equal(undefined);
    expect(summarizer.calls).to.equal(0);
  });

  it('providerSummarizer asks the model, with no tools, for a summary of the messages', async () => {
    const model = new MockChatProvider([textPart('They said hi.')]);
    const summarize = providerSummarizer(model);
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
    expect(await summarize(messages, {})).to.equal('They said hi.');
    const asked = model.lastRequest!;
    expect(asked.tools).to.deep.equal([]);
    expect(asked.history.slice(0, 1)).to.deep.equal(messages);
    expect(JSON.stringify(asked.history.at(-1))).to.match(/Summarise the conversation above/);
    const silent = providerSummarizer(new MockChatProvider([]));
    expect(String(await silent(messages, {}).catch((e: unknown) => e))).to.match(/no summary text/);
    expect(() => providerSummarizer(model, { prompt: 'x' } as never)).to.throw(TypeError, /unknown option "prompt"/);
  });
});
