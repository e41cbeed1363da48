/**
 * Replay policies of MCP tools, against the fixture server process: taken from the server's
 * annotations (`readOnlyHint`, `idempotentHint`), overridden by the `replay` option, refused when
 * the option is no policy, and honoured by an agent that completes an interrupted step.
 */
import { Agent, LinearContext, requireApproval, step, textPart, toolCall, type ChatProvider, type Message } from '@kosong/core';
import { replayPolicyOf } from '@kosong/core/toolset-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpToolset, type McpConnectionError, type McpToolsetOptions } from '../index.js';
import { callTool, killLeftovers, startHttpFixture, statsOf, stdioServer, waitFor, type HttpFixture } from './support.js';

/** The policy the toolset answers for a call of `name`. */
function policyOf(toolset: McpToolset, name: string): string {
  return replayPolicyOf(toolset, toolCall('c', name, '{}'));
}

describe('McpToolset replay policies', () => {
  const opened: McpToolset[] = [];
  let http: HttpFixture;

  async function open(options: Partial<McpToolsetOptions> = {}): Promise<McpToolset> {
    const toolset = new McpToolset({ name: 'fixture', server: stdioServer(), ...options });
    opened.push(toolset);
    await toolset.connect();
    return toolset;
  }

  before(async () => (http = await startHttpFixture()));
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
  });
  after(async () => {
    await http?.kill();
    expect(killLeftovers(), 'fixture processes left alive').to.deep.equal([]);
  });

  for (const kind of ['stdio', 'http'] as const) {
    it(`over ${kind}: from the annotations: readOnlyHint or idempotentHint → safe; explicit false, none, or an unknown name → never`, async () => {
      const toolset = await open(kind === 'http' ? { server: http.config } : {});
      const names = ['echo', 'add', 'fail', 'slow', 'stats', 'missing'];
      expect(names.map((name) => policyOf(toolset, name))).to.deep.equal(['safe', 'safe', 'never', 'never', 'never', 'never']);
    });
  }

  it('before the first listing every name is never; a prefix is the model-facing name, the option keys are the server names', async () => {
    const toolset = new McpToolset({ name: 'fixture', server: stdioServer(), prefix: 'fx_', replay: { stats: 'ask' } });
    opened.push(toolset);
    expect(policyOf(toolset, 'fx_echo'), 'not listed yet').to.equal('never');
    await toolset.connect();
    expect(['fx_echo', 'fx_stats', 'echo', 'stats'].map((name) => policyOf(toolset, name))).to.deep.equal(['safe', 'ask', 'never', 'never']);
  });

  it('a record overrides the annotations of the tools it names; the others keep theirs', async () => {
    const toolset = await open({ replay: { echo: 'never', slow: 'ask', stats: 'safe' } });
    expect(['echo', 'add', 'slow', 'stats', 'fail'].map((name) => policyOf(toolset, name))).to.deep.equal(['never', 'safe', 'ask', 'safe', 'never']);
  });

  it('a function decides from the listed tool; undefined leaves a tool to its annotations; () => never trusts none', async () => {
    const seen: string[] = [];
    const toolset = await open({
      replay: (tool) => {
        seen.push(tool.name);
        return tool.name === 'stats' ? 'safe' : tool.annotations?.destructiveHint === true ? 'ask' : undefined;
      },
    });
    expect(seen).to.include.members(['echo', 'add', 'fail', 'stats']);
    expect(['echo', 'add', 'fail', 'stats', 'slow'].map((name) => policyOf(toolset, name))).to.deep.equal(['safe', 'safe', 'ask', 'safe', 'never']);
    const distrustful = await open({ replay: () => 'never' });
    expect(['echo', 'add'].map((name) => policyOf(distrustful, name))).to.deep.equal(['never', 'never']);
  });

  it('a function that throws or answers no policy gives never for that tool, reported to onError', async () => {
    const errors: McpConnectionError[] = [];
    const toolset = await open({
      onError: (error) => errors.push(error),
      replay: (tool) => {
        if (tool.name === 'echo') throw new Error('cannot say');
        return tool.name === 'add' ? ('sometimes' as never) : undefined;
      },
    });
    expect(['echo', 'add', 'stats'].map((name) => policyOf(toolset, name))).to.deep.equal(['never', 'never', 'never']);
    const messages = errors.map((error) => error.message);
    expect(messages).to.include('MCP server "fixture": replay threw for tool "echo": cannot say; the tool\'s calls are not run again after an interruption');
    expect(messages).to.include(
      `MCP server "fixture": replay answered "sometimes" for tool "add", not 'safe', 'never' or 'ask'; the tool's calls are not run again after an interruption`,
    );
  });

  it('follows the tool list: a tool added at run time gets the policy of its annotations', async () => {
    const toolset = await open();
    await callTool(toolset, 'add_tool', { name: 'reader', readOnly: true });
    await callTool(toolset, 'add_tool', { name: 'writer', readOnly: false });
    await waitFor('the new tools to be listed', () => toolset.tools.some((tool) => tool.name === 'writer'));
    expect(['reader', 'writer'].map((name) => policyOf(toolset, name))).to.deep.equal(['safe', 'never']);
  });

  it('is kept through requireApproval', async () => {
    const toolset = await open({ replay: { slow: 'ask' } });
    const gated = requireApproval(toolset, ['slow']);
    expect(['echo', 'slow', 'fail'].map((name) => replayPolicyOf(gated, toolCall('c', name, '{}')))).to.deep.equal(['safe', 'ask', 'never']);
  });

  for (const [bad, message] of [
    ['safe', "McpToolset: replay must be a record of replay policies by tool name, or a function, got \"safe\""],
    [['echo'], 'McpToolset: replay must be a record of replay policies by tool name, or a function, got an array'],
    [null, 'McpToolset: replay must be a record of replay policies by tool name, or a function, got null'],
    [{ echo: 'safe', slow: 'twice' }, `McpToolset: replay["slow"] must be 'safe', 'never' or 'ask', got "twice"`],
    [{ echo: true }, `McpToolset: replay["echo"] must be 'safe', 'never' or 'ask', got true`],
  ] as const) {
    it(`refuses replay: ${JSON.stringify(bad)} with a TypeError when the toolset is made, before any process starts`, () => {
      expect(() => new McpToolset({ server: stdioServer(), replay: bad as never })).to.throw(TypeError, message);
    });
  }

  it('a record changed after the toolset was made changes nothing', async () => {
    const replay: Record<string, 'safe' | 'never' | 'ask'> = { slow: 'ask' };
    const toolset = await open({ replay });
    replay.slow = 'safe';
    replay.fail = 'safe';
    await toolset.refreshTools();
    expect(['slow', 'fail'].map((name) => policyOf(toolset, name))).to.deep.equal(['ask', 'never']);
  });

  describe('under an agent that completes an interrupted step', () => {
    let dir: string;
    beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'kosong-mcp-replay-'))));
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('the read-only tool runs again on the server; the unannotated one does not, and the model is told it was interrupted', async function () {
      this.timeout(20_000);
      const session = join(dir, 'session.jsonl');
      const toolset = await open();
      const model = (): ChatProvider => {
        const provider = {
          name: 'plan',
          modelName: 'plan',
          thinkingEffort: undefined,
          generation: {},
          generate(...args: Parameters<ChatProvider['generate']>) {
            const answered = args[2].some((m: Message) => m.role === 'tool');
            const parts = answered ? [textPart('Done.')] : [toolCall('c1', 'read_slowly', '{"ms": 60000}'), toolCall('c2', 'slow', '{"ms": 60000}')];
            return new MockChatProvider(parts, answered ? {} : { finishReason: 'tool_calls' }).generate(...args);
          },
          withThinking: () => provider,
          withGeneration: () => provider,
        };
        return provider;
      };
      const agent = (context: LinearContext): Agent => new Agent({ systemPrompt: '', context, step: (o) => step({ ...o, provider: model(), toolset }) });

      // The first context stands for a process that stops while both calls run: it never finishes its
      // step, and neither call has an outcome (a safe call that finished would keep its recorded one).
      const first = new LinearContext(session, { lock: false });
      await first.restore();
      const stopped = new AbortController();
      const firstTurn = agent(first).run('Go.', { signal: stopped.signal }).catch((error: unknown) => error);
      await waitFor('both calls to reach the server', async () => {
        const { started } = await statsOf(toolset);
        return started.slow === 1 && started.read_slowly === 1;
      }, 10_000);

      const second = new LinearContext(session, { lock: false });
      await second.restore();
      const result = await agent(second).run('Go on.');
      expect(result.stopReason).to.equal('no_tool_calls');
      const { started } = await statsOf(toolset);
      expect(started, 'slow ran once, read_slowly twice').to.deep.equal({ echo: 0, slow: 1, read_slowly: 2 });
      const results = second.history.filter((m) => m.role === 'tool').map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
      expect(results[0]).to.equal('read');
      expect(results[1]).to.match(/Tool call was interrupted: it started, but its outcome was never recorded/);
      await second.close();

      stopped.abort(new Error('the first process is gone'));
      await firstTurn;
      await first.close();
    });
  });
});
