import { expect } from 'chai';

import { EchoScriptError, parseEchoScript, ScriptedEchoChatProvider, splitEchoSteps } from '../index.js';
import { collect, lines } from './support.js';

describe('splitEchoSteps', () => {
  it('splits at lines that are just --- (trimmed), numbering each step by its first line in the whole script', () => {
    expect(splitEchoSteps(lines('text: a', 'text: b', ' --- ', 'text: c', '---', '', 'text: d'))).to.deep.equal([
      { script: 'text: a\ntext: b', firstLine: 1 },
      { script: 'text: c', firstLine: 4 },
      { script: '\ntext: d', firstLine: 6 },
    ]);
  });

  it('keeps a script without a separator as it was written, line breaks included', () => {
    for (const script of ['', 'text: a\r\ntext: b\r\n', 'text: ---', 'text: a\n----\n']) {
      expect(splitEchoSteps(script)).to.deep.equal([{ script, firstLine: 1 }]);
    }
  });

  it('counts every kind of line break once, as the parser does', () => {
    expect(splitEchoSteps('text: a\r\n---\rtext: b\u2028---\ntext: c')).to.deep.equal([
      { script: 'text: a', firstLine: 1 },
      { script: 'text: b', firstLine: 3 },
      { script: 'text: c', firstLine: 5 },
    ]);
  });

  it('gives empty steps for consecutive, leading and trailing separators', () => {
    expect(splitEchoSteps('---\ntext: a\n---\n---').map((step) => step.script)).to.deep.equal(['', 'text: a', '', '']);
  });

  it('parseEchoScript refuses a separator with a clear error (it parses one step)', () => {
    expect(() => parseEchoScript('text: a\n---\ntext: b'))
      .to.throw(EchoScriptError, "A '---' step separator at line 2: a script of several steps is played one step at a time (splitEchoSteps)")
      .with.property('lineNumber', 2);
  });

  it('parseEchoScript numbers lines from firstLine', () => {
    expect(() => parseEchoScript('text: fine\nnope', { firstLine: 7 })).to.throw(EchoScriptError, "Invalid echo DSL at line 8: 'nope'");
  });
});

describe('ScriptedEchoChatProvider with multi-step scripts', () => {
  it('queues the steps of a script one after the other', async () => {
    const trace: string[] = [];
    const provider = new ScriptedEchoChatProvider(['text: 1\n---\ntext: 2', 'text: 3'], { trace: (line) => trace.push(line) });
    expect(provider.remaining).to.equal(3);
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push(...(await collect(await provider.generate('', [], []))).map((part) => (part as { text: string }).text));
    expect(texts).to.deep.equal(['1', '2', '3']);
    expect(trace).to.deep.equal(['SCRIPTED_ECHO TURN 1: "text: 1"', 'SCRIPTED_ECHO TURN 2: "text: 2"', 'SCRIPTED_ECHO TURN 3: "text: 3"']);
  });

  it('names lines as numbered in the whole script', async () => {
    const provider = new ScriptedEchoChatProvider(['text: 1\n---\ntext: 2\nbanana: 3']);
    await collect(await provider.generate('', [], []));
    const error = await provider.generate('', [], []).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(EchoScriptError).with.property('lineNumber', 4);
  });
});
