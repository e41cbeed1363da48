/**
 * Approval declared on the tool (`needsApproval` of `defineTool` / `defineJsonSchemaTool`), answered
 * by `SimpleToolset.needsApproval` and forwarded by `combineToolsets`; and builders that refuse an
 * option they do not know (a security option must never be dropped quietly).
 */
import { createMessage, requireApproval, step, toolCall, type ApprovalCallback, type ApprovalRequest, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { z } from 'zod';
import { combineToolsets, defineJsonSchemaTool, defineTool, SimpleToolset, ToolDefinitionError } from '../index.js';

/** Runs one step in which the model calls `name` with `args`; what ran, and what the approval handler was asked. */
async function callOnce(toolset: Toolset, name: string, args: string, onApproval?: ApprovalCallback) {
  const asked: ApprovalRequest[] = [];
  const result = await step({
    provider: new MockChatProvider([toolCall('c1', name, args)]),
    systemPrompt: '',
    toolset,
    history: [createMessage('user', 'go')],
    ...(onApproval ? { onApproval: (request: ApprovalRequest) => (asked.push(request), onApproval(request)) } : {}),
  });
  const [first] = await result.toolResults();
  return { result: first!, asked };
}

describe('needsApproval on a tool', () => {
  let ran: unknown[];
  beforeEach(() => {
    ran = [];
  });
  const charge = (needsApproval: boolean | ((args: { cents: number; currency: string }) => boolean | Promise<boolean>)) =>
    defineTool({
      name: 'charge',
      description: 'Charges a card.',
      parameters: z.object({ cents: z.number().int(), currency: z.string().default('EUR') }),
      needsApproval,
      execute: (args) => (ran.push(args), 'charged'),
    });

  it('true: the call waits for the approval handler; denied, it does not run; without a handler it is deferred', async () => {
    const toolset = new SimpleToolset([charge(true)]);
    const denied = await callOnce(toolset, 'charge', '{"cents":5}', () => ({ type: 'deny', reason: 'no' }));
    expect(denied.asked.map((r) => r.toolCall.id)).to.deep.equal(['c1']);
    expect(denied.result.returnValue.message).to.equal('The tool call was denied: no');
    const deferred = await callOnce(toolset, 'charge', '{"cents":5}');
    expect(deferred.result.deferred).to.equal(true);
    expect(ran).to.deep.equal([]);
    const approved = await callOnce(toolset, 'charge', '{"cents":5}', () => ({ type: 'approve' }));
    expect(approved.result.returnValue.output).to.equal('charged');
    expect(ran).to.deep.equal([{ cents: 5, currency: 'EUR' }]);
  });

  it('a function decides from the parsed arguments (defaults applied); false runs it without asking', async () => {
    const seen: unknown[] = [];
    const toolset = new SimpleToolset([charge((args) => (seen.push(args), args.cents > 100))]);
    const small = await callOnce(toolset, 'charge', '{"cents":5}', () => ({ type: 'deny' }));
    expect(small.asked).to.deep.equal([]);
    expect(small.result.returnValue.output).to.equal('charged');
    const big = await callOnce(toolset, 'charge', '{"cents":500}', () => ({ type: 'deny' }));
    expect(big.asked).to.have.length(1);
    expect(big.result.returnValue.isError).to.equal(true);
    expect(seen).to.deep.equal([
      { cents: 5, currency: 'EUR' },
      { cents: 500, currency: 'EUR' },
    ]);
    expect(ran).to.deep.equal([{ cents: 5, currency: 'EUR' }]);
  });

  it('a function that throws: the call does not run, the model is told the check failed', async () => {
    const toolset = new SimpleToolset([
      charge(() => {
        throw new Error('policy service down');
      }),
    ]);
    const { result, asked } = await callOnce(toolset, 'charge', '{"cents":5}', () => ({ type: 'approve' }));
    expect(asked).to.deep.equal([]);
    expect(result.returnValue.message).to.include('the approval check failed: policy service down');
    expect(ran).to.deep.equal([]);
  });

  it('arguments that do not validate: nothing is asked, the call gets the validation error and does not run', async () => {
    const toolset = new SimpleToolset([charge(true)]);
    const { result, asked } = await callOnce(toolset, 'charge', '{"cents":"a lot"}', () => ({ type: 'approve' }));
    expect(asked).to.deep.equal([]);
    expect(result.returnValue.message).to.match(/^Error validating JSON arguments/);
    expect(ran).to.deep.equal([]);
  });

  it('a JSON-Schema tool takes it too', async () => {
    const tool = defineJsonSchemaTool<{ path: string }>({
      name: 'delete',
      description: 'Deletes a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      needsApproval: (args) => !args.path.startsWith('/tmp/'),
      execute: (args) => (ran.push(args), 'deleted'),
    });
    const toolset = new SimpleToolset([tool]);
    expect((await callOnce(toolset, 'delete', '{"path":"/tmp/x"}', () => ({ type: 'deny' }))).asked).to.deep.equal([]);
    expect((await callOnce(toolset, 'delete', '{"path":"/etc/passwd"}', () => ({ type: 'deny' }))).asked).to.have.length(1);
    expect(ran).to.deep.equal([{ path: '/tmp/x' }]);
  });

  it('combineToolsets asks the toolset that has the tool: a requireApproval toolset or a tool with needsApproval stays guarded', async () => {
    const plain = new SimpleToolset([defineTool({ name: 'read', description: 'Reads.', parameters: z.object({}), execute: () => (ran.push('read'), 'text') })]);
    const guarded = requireApproval(new SimpleToolset([defineTool({ name: 'wipe', description: 'Wipes.', parameters: z.object({}), execute: () => (ran.push('wipe'), 'wiped') })]));
    const own = new SimpleToolset([charge(true)]);
    const combined = combineToolsets(plain, guarded, own);
    const deny = (): { type: 'deny' } => ({ type: 'deny' });
    expect((await callOnce(combined, 'wipe', '{}', deny)).asked).to.have.length(1);
    expect((await callOnce(combined, 'charge', '{"cents":1}', deny)).asked).to.have.length(1);
    expect((await callOnce(combined, 'read', '{}', deny)).asked).to.deep.equal([]);
    expect(ran).to.deep.equal(['read']);
  });

  it('a value that is neither a boolean nor a function is refused when the tool is defined', () => {
    for (const bad of ['yes', 1, null, {}]) {
      expect(() => charge(bad as never)).to.throw(ToolDefinitionError, /needsApproval must be a boolean or a function/);
    }
  });
});

describe('builders refuse an option they do not know', () => {
  it('defineTool, defineJsonSchemaTool, SimpleToolset and add: a TypeError naming the option', () => {
    const base = { name: 't', description: 'd', execute: () => 'ok' };
    const misspelt: object = { needsAproval: true };
    const attempts: [string, () => unknown][] = [
      ['defineTool', () => defineTool({ ...base, parameters: z.object({}), ...misspelt } as never)],
      ['defineJsonSchemaTool', () => defineJsonSchemaTool({ ...base, parameters: { type: 'object' }, ...misspelt } as never)],
      ['SimpleToolset', () => new SimpleToolset([], { maxConcurency: 2 } as never)],
      ['add', () => new SimpleToolset().add(defineTool({ ...base, parameters: z.object({}) }), { replaced: true } as never)],
    ];
    for (const [what, attempt] of attempts) {
      let error: unknown;
      try {
        attempt();
      } catch (e) {
        error = e;
      }
      expect(error, what).to.be.instanceOf(TypeError);
      expect(error, what).to.satisfy(ToolDefinitionError.isInstance);
      expect((error as Error).message, what).to.match(/has no option "(needsAproval|maxConcurency|replaced)"/);
    }
  });
});

describe('a number beyond the double range in tool arguments', () => {
  it('is an invalid argument for a JSON-Schema tool, as for a zod tool (1e400 is read as Infinity)', async () => {
    const ran: unknown[] = [];
    const jsonTool = defineJsonSchemaTool<{ n: number }>({
      name: 'json_n',
      description: 'Takes a number.',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: (args) => (ran.push(args), 'ok'),
    });
    const zodTool = defineTool({ name: 'zod_n', description: 'Takes a number.', parameters: z.object({ n: z.number() }), execute: (args) => (ran.push(args), 'ok') });
    const toolset = new SimpleToolset([jsonTool, zodTool]);
    for (const name of ['json_n', 'zod_n']) {
      const { result } = await callOnce(toolset, name, '{"n": 1e400}');
      expect(result.returnValue.message, name).to.match(/^Error validating JSON arguments/);
    }
    expect((await callOnce(toolset, 'json_n', '{"n": 1e300}')).result.returnValue.output).to.equal('ok');
    expect(ran).to.deep.equal([{ n: 1e300 }]);
  });
});
