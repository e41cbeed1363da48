import { definePlugin, textPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loggingPlugin, StepLogger } from '../index.js';
import { kernelWith, providerPlugin } from './support.js';

const CHILD = fileURLToPath(new URL('./log-then-exit.js', import.meta.url));
const STEPS = 20;
const LINES_PER_STEP = 3; // step.start, step.end, step.cleanup (debug)

const base = { systemPrompt: 'hi', history: [{ role: 'user' as const, content: [textPart('go')] }] };

/** How many descriptors of this process are open on `path` (Linux: `/proc/self/fd`). */
function descriptorsOn(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) count++;
    } catch {
      // the descriptor readdir itself used, closed by now
    }
  }
  return count;
}

/** The events of the lines in `path`. */
async function eventsIn(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  return text === '' ? [] : text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { event: string }).event);
}

/** Runs the child (see `log-then-exit.ts`) and resolves with its exit code and stderr. */
function runChild(path: string, mode: 'dispose' | 'flush'): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, mode], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

describe('loggingPlugin: a file path destination', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-logging-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const mode of ['dispose', 'flush'] as const) {
    it(`has every line in the file once ${mode === 'dispose' ? 'kernel.dispose()' : 'StepLogger.flush()'} resolves, even if the process exits right after`, async () => {
      const path = join(dir, 'steps.log');
      const { code, stderr } = await runChild(path, mode);
      expect(stderr).to.equal('');
      expect(code).to.equal(0);
      const lines = (await readFile(path, 'utf8')).split('\n');
      expect(lines.pop()).to.equal(''); // ends with a newline
      expect(lines).to.have.lengthOf(STEPS * LINES_PER_STEP);
      const events = lines.map((line) => (JSON.parse(line) as { event: string }).event);
      expect(events.slice(0, LINES_PER_STEP)).to.deep.equal(['step.start', 'step.end', 'step.cleanup']);
      expect(events.filter((event) => event === 'step.end')).to.have.lengthOf(STEPS);
    });
  }

  it('has each line in the file as soon as it is logged (no flush needed), appending to what was there', async () => {
    const path = join(dir, 'steps.log');
    await runChild(path, 'flush');
    const logs = new StepLogger({ destination: path });
    const kernel = await kernelWith(providerPlugin(new MockChatProvider([textPart('hi')])), loggingPlugin(logs));
    await kernel.runner().step(base);
    const events = await eventsIn(path);
    expect(events).to.have.lengthOf(STEPS * LINES_PER_STEP + 2);
    expect(events.slice(-2)).to.deep.equal(['step.start', 'step.end']);
    await kernel.dispose();
    await logs.close();
  });

  it('closes the file it opened when the kernel is disposed; later records are dropped without a throw', async () => {
    const path = join(dir, 'steps.log');
    const plugin = loggingPlugin({ destination: path });
    expect(descriptorsOn(path)).to.equal(1);
    const provider = new MockChatProvider([textPart('hi')]);
    const kernel = await kernelWith(providerPlugin(provider), plugin);
    await kernel.runner().step(base);
    await kernel.dispose();
    expect(descriptorsOn(path)).to.equal(0);
    expect(await eventsIn(path)).to.deep.equal(['step.start', 'step.end']);

    const logs = new StepLogger({ destination: path });
    await logs.close();
    await logs.close(); // idempotent
    await logs.flush();
    const failures: unknown[] = [];
    const watcher = definePlugin({ name: 'watcher', setup: (ctx) => ctx.bindHookErrorSink({ report: (report) => failures.push(report) }) });
    const late = await kernelWith(providerPlugin(provider), loggingPlugin(logs), watcher);
    await late.runner().step(base);
    logs.hookErrorSink.report({ stepId: 's', tenant: undefined, provider: undefined, model: undefined, plugin: 'x', hook: 'onPart', kind: 'threw', error: new Error('late'), detached: false });
    await late.dispose();
    expect(failures).to.deep.equal([]);
    expect(await eventsIn(path)).to.deep.equal(['step.start', 'step.end']);
  });

  it("flushes a caller's file descriptor and never closes it", async () => {
    const path = join(dir, 'steps.log');
    const fd = openSync(path, 'a');
    try {
      const kernel = await kernelWith(providerPlugin(new MockChatProvider([textPart('hi')])), loggingPlugin({ destination: fd }));
      await kernel.runner().step(base);
      await kernel.dispose();
      expect(descriptorsOn(path)).to.equal(1);
      expect(await eventsIn(path)).to.deep.equal(['step.start', 'step.end']);
    } finally {
      closeSync(fd);
    }
  });

  it('refuses a path it cannot open, or a descriptor that is not open, at once and by name', () => {
    const missing = join(dir, 'no', 'such', 'dir', 'steps.log');
    expect(() => new StepLogger({ destination: missing })).to.throw(Error, `cannot open the log file ${missing}`);
    expect(() => loggingPlugin({ destination: 987_654 })).to.throw(Error, 'file descriptor 987654 is not open');
  });
});
