/**
 * Replay policies of tools defined here: declared with `replay`, answered by `SimpleToolset`,
 * forwarded by `combineToolsets` (and core's `requireApproval`), refused when they are no policy;
 * and what a tool gets to pass on to an external API (`ToolContext.idempotencyKey`).
 */
import {
  Agent,
  LinearContext,
  requireApproval,
  step,
  textPart,
  toolCall,
  toolOk,
  type ChatProvider,
  type Message,
  type ToolContext,
  type Toolset,
} from '@kosong/core';
import { replayPolicyOf } from '@kosong/core/toolset-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { combineToolsets, defineJsonSchemaTool, defineTool, SimpleToolset, ToolDefinitionError, type CallableTool } from '../index.js';
import { call, deferred } from './support.js';

function zodTool(name: string, replay?: 'safe' | 'never' | 'ask'): CallableTool {
  return defineTool({ name, description: name, parameters: z.object({}), execute: () => name, ...(replay === undefined ? {} : { replay }) });
}

function schemaTool(name: string, replay?: 'safe' | 'never' | 'ask'): CallableTool {
  return defineJsonSchemaTool({ name, description: name, parameters: { type: 'object' }, execute: () => name, ...(replay === undefined ? {} : { replay }) });
}

describe('replay policies', () => {
  describe('declared with replay, answered by SimpleToolset', () => {
    it('answers each tool its own policy; a tool that declares none and an unknown name are never', () => {
      const toolset = new SimpleToolset([zodTool('read', 'safe'), schemaTool('pay', 'never'), zodTool('mail', 'ask'), schemaTool('lookup', 'safe'), zodTool('plain')]);
      const policies = ['read', 'pay', 'mail', 'lookup', 'plain', 'missing'].map((name) => toolset.replayPolicy(call(name, '{}')));
      expect(policies).to.deep.equal(['safe', 'never', 'ask', 'safe', 'never', 'never']);
      expect(toolset.get('read')?.replay).to.equal('safe');
      expect(toolset.get('plain')).not.to.have.property('replay');
      expect(toolset.tools[0], 'the model is not told').not.to.have.property('replay');
    });

    it('follows the tools as they are replaced and removed', () => {
      const toolset = new SimpleToolset([zodTool('act', 'safe')]);
      toolset.add(zodTool('act', 'ask'), { replace: true });
      expect(toolset.replayPolicy(call('act', '{}'))).to.equal('ask');
      toolset.remove('act');
      expect(toolset.replayPolicy(call('act', '{}'))).to.equal('never');
    });

    for (const bad of ['sometimes', 'SAFE', '', true, 1, null, {}]) {
      it(`refuses replay: ${JSON.stringify(bad)} when the tool is defined, naming the tool and the option`, () => {
        for (const define of [defineTool, defineJsonSchemaTool] as const) {
          const definition = { name: 'act', description: 'Acts.', parameters: define === defineTool ? z.object({}) : { type: 'object' }, execute: () => 'ok', replay: bad };
          expect(() => (define as (d: unknown) => CallableTool)(definition))
            .to.throw(ToolDefinitionError, /^Tool `act`: replay must be 'safe', 'never' or 'ask', got /)
            .with.property('tool', 'act');
        }
      });
    }

    it('refuses a hand-made tool whose replay is no policy when it is added', () => {
      const handMade = { ...zodTool('act'), replay: 'twice' } as unknown as CallableTool;
      expect(() => new SimpleToolset([handMade])).to.throw(ToolDefinitionError, `Tool \`act\`: replay must be 'safe', 'never' or 'ask', got "twice"`);
    });
  });

  describe('through combineToolsets and requireApproval', () => {
    it('each call gets the policy of the toolset that has its tool; a toolset that declares none, and unknown names, give never', () => {
      const reads = new SimpleToolset([zodTool('read', 'safe')], { name: 'reads' });
      const writes = new SimpleToolset([zodTool('write', 'ask'), zodTool('delete')], { name: 'writes' });
      const bare: Toolset = { tools: [{ name: 'bare', description: 'No policies.', parameters: { type: 'object' } }], handle: (c) => ({ toolCallId: c.id, returnValue: toolOk({ output: '' }) }) };
      const combined = combineToolsets(reads, { name: 'writes', toolset: writes }, bare);
      const names = ['read', 'write', 'delete', 'bare', 'missing'];
      expect(names.map((name) => combined.replayPolicy!(call(name, '{}')))).to.deep.equal(['safe', 'ask', 'never', 'never', 'never']);
      // requireApproval keeps the policies of what it wraps, and a combination of wrapped toolsets too.
      const gated = requireApproval(combined, ['write']);
      expect(names.map((name) => replayPolicyOf(gated, call(name, '{}')))).to.deep.equal(['safe', 'ask', 'never', 'never', 'never']);
      const nested = combineToolsets(requireApproval(reads), { name: 'writes', toolset: requireApproval(writes) });
      expect(['read', 'write', 'delete'].map((name) => replayPolicyOf(nested, call(name, '{}')))).to.deep.equal(['safe', 'ask', 'never']);
    });

    it('a toolset whose replayPolicy throws or answers garbage gives never, for its names only', () => {
      const liar: Toolset = {
        tools: [{ name: 'liar', description: '', parameters: { type: 'object' } }, { name: 'thrower', description: '', parameters: { type: 'object' } }],
        handle: (c) => ({ toolCallId: c.id, returnValue: toolOk({ output: '' }) }),
        replayPolicy: (c) => {
          if (c.function.name === 'thrower') throw new Error('no idea');
          return 'maybe' as never;
        },
      };
      const combined = combineToolsets(new SimpleToolset([zodTool('read', 'safe')]), liar);
      expect(['read', 'liar', 'thrower'].map((name) => replayPolicyOf(combined, call(name, '{}')))).to.deep.equal(['safe', 'never', 'never']);
    });

    it('a name two toolsets provide (a conflict that appeared later) gives never', () => {
      const first = new SimpleToolset([zodTool('act', 'safe')]);
      const second = new SimpleToolset([zodTool('other', 'safe')]);
      const combined = combineToolsets(first, second);
      second.add(zodTool('act', 'safe'));
      expect(combined.replayPolicy!(call('act', '{}'))).to.equal('never');
      expect(combined.replayPolicy!(call('other', '{}'))).to.equal('safe');
    });
  });

  describe('what a tool gets to pass on to an external API', () => {
    it("execute gets the step's idempotency key, the call's index and the run context, with a signal of its own", async () => {
      const seen: ToolContext[] = [];
      const tool = defineTool({ name: 'pay', description: 'Pays.', parameters: z.object({}), execute: (_, context) => (seen.push(context), 'paid') });
      const outer: ToolContext[] = [];
      const toolset = new SimpleToolset([tool]);
      const spy: Toolset = { tools: toolset.tools, handle: (c, context) => (outer.push(context), toolset.handle(c, context)) };
      const history: Message[] = [{ role: 'user', content: [textPart('go')] }];
      const provider = new MockChatProvider([toolCall('c1', 'pay', '{}'), toolCall('c2', 'pay', '{}')]);
      const result = await step({ provider, systemPrompt: '', history, toolset: spy, context: { user: 'ada' } });
      expect((await result.toolResults()).map((r) => r.returnValue.output)).to.deep.equal(['paid', 'paid']);
      expect(seen.map((c) => c.index)).to.have.members([0, 1]);
      for (const context of seen) {
        const given = outer.find((c) => c.index === context.index)!;
        expect(context.idempotencyKey).to.be.a('string').and.equal(given.idempotencyKey);
        expect(context.context).to.deep.equal({ user: 'ada' });
        expect(context.stepId).to.equal(result.stepId);
        expect(context.signal).not.to.equal(given.signal);
      }
      expect(seen[0]!.idempotencyKey).not.to.equal(seen[1]!.idempotencyKey);
    });
  });

  describe('under an agent whose step is done again (another context took the session over)', () => {
    let dir: string;
    beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'kosong-replay-'))));
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it("the 'safe' tool runs again with the same idempotency key; the 'never' tool does not, and the model is told it was interrupted", async () => {
      const session = join(dir, 'session.jsonl');
      const runs: string[] = [];
      const hang = deferred<string>();
      let blocking = true;
      const started = deferred();
      const record = (name: string, context: ToolContext): void => {
        runs.push(`${name} ${context.idempotencyKey}`);
        if (runs.length === 2) started.resolve();
      };
      const tools = new SimpleToolset([
        defineTool({ name: 'lookup', description: '', parameters: z.object({}), replay: 'safe', execute: async (_, c) => (record('lookup', c), blocking ? hang.promise : 'found') }),
        defineTool({ name: 'pay', description: '', parameters: z.object({}), execute: async (_, c) => (record('pay', c), blocking ? hang.promise : 'paid') }),
      ]);
      const provider: () => ChatProvider = () => {
        const model = {
          name: 'plan',
          modelName: 'plan',
          thinkingEffort: undefined,
          generation: {},
          generate(...args: Parameters<ChatProvider['generate']>) {
            const answered = args[2].some((m) => m.role === 'tool');
            const mock = answered ? new MockChatProvider([textPart('Done.')]) : new MockChatProvider([toolCall('c1', 'lookup', '{}'), toolCall('c2', 'pay', '{}')], { finishReason: 'tool_calls' });
            return mock.generate(...args);
          },
          withThinking: () => model,
          withGeneration: () => model,
        };
        return model;
      };
      // The first context stands for a process that stops while both calls run (it never finishes its step).
      const first = new LinearContext(session, { lock: false });
      await first.restore();
      const stopped = new AbortController();
      const firstTurn = new Agent({ systemPrompt: '', context: first, step: (o) => step({ ...o, provider: provider(), toolset: tools }) })
        .run('Go.', { signal: stopped.signal, turn: { id: 'turn-1' } })
        .catch((error: unknown) => error);
      await started.promise;

      blocking = false;
      const second = new LinearContext(session, { lock: false });
      await second.restore();
      const result = await new Agent({ systemPrompt: '', context: second, step: (o) => step({ ...o, provider: provider(), toolset: tools }) }).run('Go on.');
      expect(result.stopReason).to.equal('no_tool_calls');
      const [lookup1, pay1, lookup2, ...rest] = runs;
      expect(rest, 'pay ran once').to.deep.equal([]);
      expect([lookup1, pay1, lookup2].map((line) => line!.split(' ')[0])).to.have.members(['lookup', 'pay', 'lookup']);
      const lookups = runs.filter((line) => line.startsWith('lookup '));
      expect(lookups[0], 'the same key both times').to.equal(lookups[1]);
      const toolMessages = second.history.filter((m) => m.role === 'tool').map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
      expect(toolMessages[0]).to.equal('found');
      expect(toolMessages[1]).to.match(/Tool call was interrupted: it started, but its outcome was never recorded/);
      await second.close();

      stopped.abort(new Error('the first process is gone'));
      hang.resolve('too late');
      await firstTurn;
      await first.close();
      const reloaded = new LinearContext(session);
      await reloaded.restore();
      expect(reloaded.history.map((m) => m.role), 'the session loads, with the completed step').to.deep.equal(['user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
      await reloaded.close();
    });
  });
});
