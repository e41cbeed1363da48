/**
 * `read_file` and `list_directory` against a path that is swapped, over and over, between an
 * ordinary entry inside the working directory and a symbolic link to the outside, by another thread
 * while the calls run: no call may ever return what is outside.
 */
import { toolCall, type ToolResult } from '@kosong/core';
import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { builtinToolset } from '../tools/builtin-tools.js';
import { makeWorkspace, type Workspace } from './cli-harness.js';

/** Swaps `target` between `what: 'file'` (written) or `'dir'` (made) and a symbolic link to `outside`, until stopped. */
const SWAPPER = `
const { renameSync, symlinkSync, writeFileSync, mkdirSync, rmSync } = require('node:fs');
const { workerData, parentPort } = require('node:worker_threads');
const { target, outside, what, flag } = workerData;
const stop = new Int32Array(flag);
let swaps = 0;
while (Atomics.load(stop, 0) === 0) {
  const link = target + '.link' + (swaps % 2);
  const real = target + '.real' + (swaps % 2);
  try {
    symlinkSync(outside, link);
    // A directory cannot be renamed over: remove it first (a file can, atomically).
    if (what === 'dir') rmSync(target, { recursive: true, force: true });
    renameSync(link, target);
    if (what === 'file') writeFileSync(real, 'inside\\n');
    else mkdirSync(real);
    if (what === 'dir') rmSync(target, { force: true });
    renameSync(real, target);
  } catch {}
  swaps++;
}
parentPort.postMessage(swaps);
`;

describe('kosong CLI: file tools against a path swapped for a link while they run', function () {
  this.timeout(60_000);
  let ws: Workspace;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => ws.remove());

  async function race(tool: 'read_file' | 'list_directory', outside: string, calls: number): Promise<{ results: ToolResult[]; swaps: number }> {
    const target = join(ws.cwd, 'swap');
    if (tool === 'read_file') writeFileSync(target, 'inside\n');
    else mkdirSync(target);
    const flag = new SharedArrayBuffer(4);
    const worker = new Worker(SWAPPER, { eval: true, workerData: { target, outside, what: tool === 'read_file' ? 'file' : 'dir', flag } });
    const swapped = new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const toolset = builtinToolset({ cwd: ws.cwd });
    const results: ToolResult[] = [];
    try {
      for (let i = 0; i < calls; i++) {
        const call = toolCall(`c${i}`, tool, JSON.stringify({ path: 'swap' }));
        results.push(await toolset.handle(call, { signal: new AbortController().signal, toolCall: call, stepId: 'race' }));
      }
    } finally {
      Atomics.store(new Int32Array(flag), 0, 1);
    }
    const swaps = await swapped;
    await worker.terminate();
    return { results, swaps };
  }

  it('read_file never returns the content of a file outside', async () => {
    const { results, swaps } = await race('read_file', ws.outsideFile, 3_000);
    const outputs = results.map((r) => r.returnValue);
    const leaked = outputs.filter((v) => typeof v.output === 'string' && v.output.includes(ws.secret));
    expect(leaked.length, `${leaked.length} of ${results.length} reads returned the outside file`).to.equal(0);
    // The race really ran: the file was swapped many times, and reads saw both states.
    expect(swaps).to.be.above(100);
    expect(outputs.filter((v) => !v.isError && v.output === 'inside\n').length, 'reads of the inside file').to.be.above(0);
    expect(outputs.filter((v) => v.isError && v.message.includes('outside the working directory')).length, 'refusals of the link').to.be.above(0);
  });

  it('list_directory never lists a directory outside', async () => {
    const { results, swaps } = await race('list_directory', ws.base, 2_000);
    const leaked = results.filter((r) => typeof r.returnValue.output === 'string' && r.returnValue.output.includes('outside.txt'));
    expect(leaked.length, `${leaked.length} of ${results.length} listings showed the outside directory`).to.equal(0);
    expect(swaps).to.be.above(100);
    expect(results.filter((r) => r.returnValue.isError && r.returnValue.message.includes('outside the working directory')).length).to.be.above(0);
  });
});
