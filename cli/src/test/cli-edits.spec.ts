/**
 * File changes through the CLI (issue 27): without `--allow-edits`, each `write_file` and
 * `edit_file` call is put to the user on a terminal with the diff it would make (`n` leaves the
 * file byte for byte), and refused where nobody can be asked; `--allow-edits` lets them run.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NOBODY_TO_ASK_EDIT, NOBODY_TO_ASK_EDIT_NOTICE } from '../approval/bash-approval.js';
import { jsonEvents, killLeftovers, makeWorkspace, runCli, toolCallLine, type Workspace } from './cli-harness.js';
import { HAS_SCRIPT, KEY, PtyCli, killPtyLeftovers } from './pty-harness.js';

const ANSWERS = '? [y]es / [n]o / [a]lways for this session';
/** The exit code of a turn that stopped at `--max-steps` (these runs stop after the step of the call). */
const STOPPED_AT_STEP_LIMIT = 3;

describe('kosong CLI: file changes (write_file, edit_file) and --allow-edits', function () {
  this.timeout(30_000);
  let ws: Workspace;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killPtyLeftovers();
    killLeftovers();
    ws.remove();
  });

  const edit = (id: string, old_string: string, new_string: string): string => toolCallLine(id, 'edit_file', { path: 'notes.txt', old_string, new_string });
  const notes = (): string => readFileSync(join(ws.cwd, 'notes.txt'), 'utf8');

  describe('on a terminal', () => {
    before(function () {
      if (!HAS_SCRIPT) this.skip(); // no util-linux `script` to make a pseudo-terminal with
    });

    it('shows the diff with the question; n leaves the file byte for byte, y changes it', async () => {
      const no = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', edit('e1', 'second line', 'SECOND LINE')], ws.cwd);
      await no.waitFor(ANSWERS);
      expect(no.output).to.include('--- a/notes.txt').and.include('+++ b/notes.txt').and.include('-second line of notes').and.include('+SECOND LINE of notes');
      no.type(`n${KEY.enter}`);
      expect(await no.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(notes(), 'denied: the file as it was').to.equal(ws.notes);
      const yes = new PtyCli(['--provider', 'echo', '--max-steps', '1', 'run', edit('e2', 'second line', 'SECOND LINE')], ws.cwd);
      await yes.waitFor(ANSWERS);
      expect(notes(), 'nothing changes before the answer').to.equal(ws.notes);
      yes.type(`y${KEY.enter}`);
      expect(await yes.waitForExit()).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(notes()).to.equal('first line of notes\nSECOND LINE of notes\n');
    });
  });

  describe('without a terminal', () => {
    it('refuses file changes: the model gets the reason, the user one line saying to pass --allow-edits; nothing is written', async () => {
      const script = [edit('e1', 'first', 'FIRST'), toolCallLine('w1', 'write_file', { path: 'new.txt', content: 'x' })].join('\n');
      const run = await runCli(['--provider', 'echo', '--max-steps', '1', '--json', 'run', script], ws.cwd);
      expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      const events = jsonEvents(run.stdout);
      const decisions = events.filter((e) => e.type === 'approval_decision').map((e) => e.decision);
      expect(decisions).to.deep.equal([
        { type: 'deny', reason: NOBODY_TO_ASK_EDIT },
        { type: 'deny', reason: NOBODY_TO_ASK_EDIT },
      ]);
      expect(events.filter((e) => e.type === 'info' && e.message === NOBODY_TO_ASK_EDIT_NOTICE)).to.have.length(1);
      expect(notes()).to.equal(ws.notes);
      expect(existsSync(join(ws.cwd, 'new.txt'))).to.equal(false);
    });

    it('--allow-edits: the changes are made without asking, and no approval events', async () => {
      const script = [edit('e1', 'first', 'FIRST'), toolCallLine('w1', 'write_file', { path: 'docs/new.txt', content: 'x\n' })].join('\n');
      const run = await runCli(['--provider', 'echo', '--max-steps', '1', '--json', '--allow-edits', 'run', script], ws.cwd);
      expect(run.code, run.stderr).to.equal(STOPPED_AT_STEP_LIMIT);
      expect(jsonEvents(run.stdout).filter((e) => e.type.startsWith('approval'))).to.deep.equal([]);
      expect(notes()).to.equal('FIRST line of notes\nsecond line of notes\n');
      expect(readFileSync(join(ws.cwd, 'docs', 'new.txt'), 'utf8')).to.equal('x\n');
    });
  });
});
