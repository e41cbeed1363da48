/**
 * `--max-tokens` and `--temperature`: checked when parsed (a usage error, exit 2), then the generation
 * options of every step of the session.
 */
import { definePlugin, textPart, UnsupportedGenerationOptionError } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { PassThrough } from 'node:stream';

import { CliSession } from '../cli-session.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { killLeftovers, makeWorkspace, runCli, type Workspace } from './cli-harness.js';

describe('kosong CLI: --max-tokens and --temperature', function () {
  this.timeout(20_000);
  let ws: Workspace;

  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  const bad: readonly [string, string, string][] = [
    ['--temperature', '3', 'expected a number from 0 to 2'],
    ['--temperature', '-0.5', 'expected a number from 0 to 2'],
    ['--temperature', 'warm', 'expected a number from 0 to 2'],
    ['--temperature', '', 'expected a number from 0 to 2'],
    ['--temperature', 'NaN', 'expected a number from 0 to 2'],
    ['--max-tokens', '0', 'expected a positive integer'],
    ['--max-tokens', '1.5', 'expected a positive integer'],
    ['--max-tokens', '1e400', 'expected a positive integer'],
  ];
  for (const [flag, value, message] of bad) {
    it(`refuses ${flag} ${JSON.stringify(value)} as a usage error (exit 2) before anything runs`, async () => {
      const { code, stdout, stderr } = await runCli(['--provider', 'echo', flag, value, 'run', 'text: never'], ws.cwd);
      expect(code).to.equal(2);
      expect(stderr).to.include(flag).and.include(message);
      expect(stdout).to.equal('');
    });
  }

  it('takes valid values and runs the turn', async () => {
    const { code, stdout, stderr } = await runCli(['--provider', 'echo', '--max-tokens', '256', '--temperature', '0', 'run', 'text: hi'], ws.cwd);
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
    expect(stdout).to.include('hi');
  });

  describe('the session', () => {
    /** A session whose provider is `provider`, rendering JSON lines into `out`. */
    async function sessionWith(provider: MockChatProvider, out: PassThrough, generation?: { maxOutputTokens?: number; temperature?: number }): Promise<CliSession> {
      return CliSession.open({
        provider: { name: 'mock', description: 'a mock', create: () => definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', provider) }) },
        renderer: new JsonRenderer(out),
        cwd: ws.cwd,
        systemPrompt: 'test',
        maxSteps: 3,
        allowBash: false,
        generation,
        env: {},
      });
    }

    it('asks every step for the options of the flags', async () => {
      const provider = new MockChatProvider([textPart('ok')]);
      const session = await sessionWith(provider, new PassThrough(), { maxOutputTokens: 256, temperature: 0.4 });
      expect(await session.turn('one')).to.equal('completed');
      expect(await session.turn('two')).to.equal('completed');
      await session.close();
      expect(provider.requests.map((r) => r.generation)).to.deep.equal([
        { maxOutputTokens: 256, temperature: 0.4 },
        { maxOutputTokens: 256, temperature: 0.4 },
      ]);
    });

    it('without the flags asks for nothing', async () => {
      const provider = new MockChatProvider([textPart('ok')]);
      const session = await sessionWith(provider, new PassThrough());
      await session.turn('one');
      await session.close();
      expect(provider.requests[0]!.generation).to.deep.equal({});
    });

    it('a provider refusing an option fails the turn with its message, once (not retried)', async () => {
      const provider = new MockChatProvider([], { generateError: new UnsupportedGenerationOptionError('mock', 'temperature', 'at most 1') });
      const out = new PassThrough();
      const session = await sessionWith(provider, out, { temperature: 1.5 });
      expect(await session.turn('one')).to.equal('failed');
      await session.close();
      const lines = String(out.read()).trim().split('\n').map((line) => JSON.parse(line) as { type: string; error?: { message: string } });
      const failed = lines.find((line) => line.type === 'turn_failed');
      expect(failed?.error?.message).to.equal('Provider "mock" does not support the generation option "temperature": at most 1.');
      expect(provider.generateCalls).to.equal(1);
    });
  });
});
