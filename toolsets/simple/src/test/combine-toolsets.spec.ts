import { emptyToolset, toolCall, toolOk, type ToolResult, type Toolset } from '@kosong/core';
import { expect } from 'chai';
import { z } from 'zod';
import { combineToolsets, defineTool, SimpleToolset, ToolNameConflictError } from '../index.js';
import { call, contextFor, run } from './support.js';

/** A tool answering with its own label, so routing is visible in the result. */
function labelled(name: string, label: string) {
  return defineTool({ name, description: `${name} (${label})`, parameters: z.object({}), execute: () => `${name} from ${label}` });
}

describe('combineToolsets', () => {
  it('lists the tools of each toolset, in order, and routes each call to the toolset that has the tool', async () => {
    const shared = new SimpleToolset([labelled('read', 'shared'), labelled('search', 'shared')]);
    const tenant = new SimpleToolset([labelled('deploy', 'tenant')]);
    const combined = combineToolsets(shared, tenant);
    expect(combined.tools.map((tool) => tool.name)).to.deep.equal(['read', 'search', 'deploy']);
    expect(combined.tools[2]).to.equal(tenant.tools[0]);
    expect((await run(combined, 'search', null)).returnValue.output).to.equal('search from shared');
    expect((await run(combined, 'deploy', null)).returnValue.output).to.equal('deploy from tenant');
    const c = call('delete', null, 'x1');
    const missing = combined.handle(c, contextFor(c)) as ToolResult;
    expect(missing.toolCallId).to.equal('x1');
    expect(missing.returnValue.message).to.equal('Tool `delete` not found');
  });

  it('throws on a name two toolsets provide, naming the tool and both toolsets', () => {
    const shared = new SimpleToolset([labelled('read', 'shared')]);
    const tenant = new SimpleToolset([labelled('deploy', 'tenant'), labelled('read', 'tenant')]);
    expect(() => combineToolsets({ name: 'shared', toolset: shared }, { name: 'tenant-a', toolset: tenant }))
      .to.throw(ToolNameConflictError, 'Tool `read` is provided by both "shared" and "tenant-a"')
      .with.property('sources')
      .that.deep.equals(['"shared"', '"tenant-a"']);
    expect(() => combineToolsets(new SimpleToolset([labelled('read', 'a')], { name: 'builtin' }), tenant)).to.throw(
      'Tool `read` is provided by both "builtin" and toolset #2 (SimpleToolset)',
    );
    const plain: Toolset = { tools: [{ name: 'read', description: '', parameters: {} }], handle: emptyToolset.handle };
    expect(() => combineToolsets(emptyToolset, plain, shared)).to.throw('Tool `read` is provided by both toolset #2 and toolset #3 (SimpleToolset)');
    expect(() => combineToolsets(shared, shared)).to.throw(ToolNameConflictError);
  });

  it('follows toolsets whose tools change; a conflict appearing later fails loudly, only for that name', async () => {
    const shared = new SimpleToolset([labelled('read', 'shared')]);
    const tenant = new SimpleToolset([labelled('deploy', 'tenant')]);
    const combined = combineToolsets({ name: 'shared', toolset: shared }, { name: 'tenant', toolset: tenant });
    tenant.add(labelled('rollback', 'tenant'));
    expect(combined.tools.map((tool) => tool.name)).to.deep.equal(['read', 'deploy', 'rollback']);
    expect((await run(combined, 'rollback', null)).returnValue.output).to.equal('rollback from tenant');
    shared.remove('read');
    expect((await run(combined, 'read', null)).returnValue.message).to.equal('Tool `read` not found');

    tenant.add(labelled('read', 'tenant'));
    shared.add(labelled('read', 'shared'));
    expect(() => combined.tools).to.throw(ToolNameConflictError, 'Tool `read` is provided by both "shared" and "tenant"');
    const conflicting = (await run(combined, 'read', null)).returnValue;
    expect(conflicting.isError).to.equal(true);
    expect(conflicting.message).to.equal('Tool `read` is provided by both "shared" and "tenant"');
    expect((await run(combined, 'deploy', null)).returnValue.output).to.equal('deploy from tenant');
  });

  it('a toolset that throws or rejects gives a runtime error result, never a throw', async () => {
    const tools = [{ name: 'sync', description: '', parameters: {} }];
    const throwing: Toolset = {
      tools,
      handle: () => {
        throw new Error('handle exploded');
      },
    };
    const rejecting: Toolset = { tools: [{ name: 'async', description: '', parameters: {} }], handle: () => Promise.reject(new Error('handle rejected')) };
    const combined = combineToolsets(throwing, rejecting);
    expect((await run(combined, 'sync', null)).returnValue.message).to.equal('Error running tool: handle exploded');
    expect((await run(combined, 'async', null)).returnValue.message).to.equal('Error running tool: handle rejected');
  });

  it('passes the context through and nests', async () => {
    let seenStep: string | undefined;
    const inner = new SimpleToolset([
      defineTool({ name: 'who', description: '', parameters: z.object({}), execute: (_args, context) => ((seenStep = context.stepId), 'me') }),
    ]);
    const combined = combineToolsets(combineToolsets(inner), new SimpleToolset());
    const c = toolCall('id-7', 'who', null);
    expect(await combined.handle(c, contextFor(c))).to.deep.equal({ toolCallId: 'id-7', returnValue: toolOk({ output: 'me' }) });
    expect(seenStep).to.equal('step-1');
    expect(combineToolsets().tools).to.deep.equal([]);
  });
});
