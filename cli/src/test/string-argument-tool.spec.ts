import { expect } from 'chai';
import type { ToolCall } from '@kosong/core';
import { SimpleToolset } from '@kosong/toolset-simple';
import { defineStringArgumentTool } from '../tools/string-argument-tool.js';

describe('defineStringArgumentTool (the built-in tools: string arguments, no zod)', () => {
  const calls: Array<Record<string, string>> = [];
  const tool = defineStringArgumentTool({
    name: 'open',
    description: 'Opens a path.',
    parameters: { path: { description: 'Where' }, mode: { default: 'r' } },
    timeoutMs: 1_000,
    execute: (args) => {
      calls.push(args);
      return `opened ${args.path} (${args.mode})`;
    },
  });

  it('describes its arguments as JSON Schema: strings, the ones without a default required', () => {
    expect(tool.parameters).to.deep.equal({
      type: 'object',
      properties: { path: { type: 'string', description: 'Where' }, mode: { type: 'string', default: 'r' } },
      required: ['path'],
    });
    expect(tool.timeoutMs).to.equal(1_000);
    expect(Object.isFrozen(tool)).to.equal(true);
  });

  it('fills defaults and drops undeclared arguments, prototype keys included', () => {
    expect(tool.validate({ path: 'a.txt' })).to.deep.equal({ ok: true, value: { path: 'a.txt', mode: 'r' } });
    const check = tool.validate(JSON.parse('{"path": "b", "mode": "w", "extra": 1, "__proto__": {"polluted": true}}'));
    expect(check).to.deep.equal({ ok: true, value: { path: 'b', mode: 'w' } });
    expect(({} as { polluted?: boolean }).polluted).to.equal(undefined);
  });

  it('reports every argument that is missing or not a string, and arguments that are not an object', () => {
    expect(tool.validate({})).to.deep.equal({ ok: false, issues: [{ path: ['path'], message: 'Invalid input: expected string, received undefined' }] });
    expect(tool.validate({ path: 3, mode: null })).to.deep.equal({
      ok: false,
      issues: [
        { path: ['path'], message: 'Invalid input: expected string, received number' },
        { path: ['mode'], message: 'Invalid input: expected string, received null' },
      ],
    });
    for (const [args, kind] of [[[], 'array'], ['path', 'string'], [null, 'null'], [7, 'number']] as const) {
      expect(tool.validate(args), kind).to.deep.equal({ ok: false, issues: [{ path: [], message: `Invalid input: expected object, received ${kind}` }] });
    }
  });

  it('in a SimpleToolset: a bad call gets an error result naming the issue, and execute never runs', async () => {
    const toolset = new SimpleToolset([tool]);
    const run = (id: string, args: string) => {
      const toolCall: ToolCall = { type: 'function', id, function: { name: 'open', arguments: args } };
      return toolset.handle(toolCall, { signal: new AbortController().signal, toolCall, stepId: 'step' });
    };
    calls.length = 0;
    const bad = await run('c1', '{"path": 1}');
    expect(bad.returnValue.isError).to.equal(true);
    expect(JSON.stringify(bad.returnValue)).to.contain('path: Invalid input: expected string, received number');
    const good = await run('c2', '{"path": "x"}');
    expect(good.returnValue).to.deep.include({ isError: false });
    expect(calls).to.deep.equal([{ path: 'x', mode: 'r' }]);
  });
});
