/**
 * AGENTS.md and KOSONG.md: read from the working directory into the system prompt, never through a
 * link to the outside, shown to the user escaped, bounded.
 */
import { expect } from 'chai';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_INSTRUCTION_BYTES, readProjectInstructions, withInstructions } from '../project-instructions.js';
import { jsonEvents, makeWorkspace, runCli, type Workspace } from './cli-harness.js';

describe('kosong CLI: project instructions (AGENTS.md, KOSONG.md)', function () {
  this.timeout(30_000);
  let ws: Workspace;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => ws.remove());

  it('adds both files, each under a heading naming it, after the system prompt; none: the prompt unchanged', async () => {
    expect(withInstructions('Base.', await readProjectInstructions(ws.cwd))).to.equal('Base.');
    writeFileSync(join(ws.cwd, 'AGENTS.md'), '# Rules\n\nUse tabs.\n');
    writeFileSync(join(ws.cwd, 'KOSONG.md'), 'Be brief.\n');
    const found = await readProjectInstructions(ws.cwd);
    expect(withInstructions('Base.', found)).to.equal('Base.\n\n# Project instructions (AGENTS.md)\n\n# Rules\n\nUse tabs.\n\n# Project instructions (KOSONG.md)\n\nBe brief.');
    expect(found.notices).to.deep.equal(['instructions: AGENTS.md (3 lines): # Rules', 'instructions: KOSONG.md (1 line): Be brief.']);
  });

  it('never follows a link to outside the working directory (a cloned repository cannot send your files to the model)', async () => {
    symlinkSync(ws.outsideFile, join(ws.cwd, 'AGENTS.md'));
    const found = await readProjectInstructions(ws.cwd);
    expect(found.text).to.equal('');
    expect(found.text).to.not.include(ws.secret);
    expect(found.notices).to.deep.equal(['instructions: AGENTS.md is a link to outside the working directory, not read']);
  });

  it('shows escape sequences escaped, refuses non-UTF-8, and cuts a huge file at 64 KiB on a whole character', async () => {
    writeFileSync(join(ws.cwd, 'AGENTS.md'), '\u001b[2J\u001b]0;pwned\u0007 Title\nbody\n');
    const escaped = await readProjectInstructions(ws.cwd);
    expect(escaped.notices[0]).to.equal('instructions: AGENTS.md (2 lines): \\x1b[2J\\x1b]0;pwned\\x07 Title');
    writeFileSync(join(ws.cwd, 'AGENTS.md'), Buffer.from('caf\xe9\n', 'latin1'));
    expect((await readProjectInstructions(ws.cwd)).notices).to.deep.equal(['instructions: AGENTS.md is not UTF-8 text, not used']);
    writeFileSync(join(ws.cwd, 'AGENTS.md'), `${'x'.repeat(MAX_INSTRUCTION_BYTES - 1)}é and more`);
    const cut = await readProjectInstructions(ws.cwd);
    expect(cut.text.endsWith('x'), 'the é cut in two is left out, not garbled').to.equal(true);
    expect(cut.notices[0]).to.match(/the first 64 KiB of 65546 bytes/);
  });

  it('the CLI tells the user which instructions it read', async () => {
    writeFileSync(join(ws.cwd, 'AGENTS.md'), '# House rules\n');
    const run = await runCli(['--provider', 'echo', '--json', 'run', 'text: hi'], ws.cwd);
    expect(run.code, run.stderr).to.equal(0);
    expect(jsonEvents(run.stdout).find((e) => e.type === 'info')).to.deep.include({ message: 'instructions: AGENTS.md (1 line): # House rules' });
  });
});
