/**
 * The CLI's approval handler on its own: an `a` (always) holds for the tool it was given for only,
 * a call's preview (an edit's diff) is shown above its question, escaped and bounded, and file
 * changes refused without a terminal say how to allow them.
 */
import { toolCall, type ApprovalRequest, type ToolCall } from '@kosong/core';
import { expect } from 'chai';
import { BashApproval, NOBODY_TO_ASK, NOBODY_TO_ASK_EDIT, NOBODY_TO_ASK_EDIT_NOTICE, NOBODY_TO_ASK_NOTICE, PREVIEW_LINES } from '../approval/bash-approval.js';
import type { Renderer } from '../render/renderer.js';

/** A renderer that keeps the info lines. */
function quietRenderer(): Renderer & { readonly lines: string[] } {
  const lines: string[] = [];
  const none = (): void => undefined;
  return { lines, turnStart: none, event: none, turnEnd: none, turnFailed: none, interrupted: none, info: (line) => void lines.push(line), pause: none, resume: none, close: none };
}

const request = (call: ToolCall): ApprovalRequest => ({ toolCall: call, signal: new AbortController().signal }) as ApprovalRequest;

describe('kosong CLI: the approval handler', () => {
  it("an 'a' (always) holds for that tool only: an edit approved always never lets bash run unasked", async () => {
    const questions: string[] = [];
    const answers = ['a', 'n', 'y'];
    const approval = new BashApproval({ ask: (question) => (questions.push(question), Promise.resolve(answers.shift())), renderer: quietRenderer() });
    const edit = toolCall('e', 'edit_file', '{"path":"a","old_string":"x","new_string":"y"}');
    expect(await approval.onApproval(request(edit))).to.deep.equal({ type: 'approve' });
    expect(await approval.onApproval(request(toolCall('e2', 'edit_file', '{}')))).to.deep.equal({ type: 'approve' }); // not asked
    expect(questions).to.have.length(1);
    expect((await approval.onApproval(request(toolCall('b', 'bash', '{"command":"rm -rf x"}')))).type).to.equal('deny');
    expect(questions).to.have.length(2);
    expect(questions[1]).to.include('Run bash: rm -rf x?');
  });

  it("shows a call's preview above its question, escaped and at most PREVIEW_LINES lines", async () => {
    const questions: string[] = [];
    const long = Array.from({ length: PREVIEW_LINES + 50 }, (_, i) => `+line ${i}`).join('\n');
    const previews = ['--- a/x\n+++ b/x\n-old\n+new \u001b[2J\u202e', long];
    const approval = new BashApproval({
      ask: (question) => (questions.push(question), Promise.resolve('y')),
      renderer: quietRenderer(),
      preview: () => Promise.resolve(previews.shift()),
    });
    await approval.onApproval(request(toolCall('e', 'edit_file', '{}')));
    expect(questions[0]).to.include('--- a/x\n+++ b/x\n-old\n+new \\x1b[2J\\u{202e}\n');
    expect(questions[0]).to.not.include('\u001b');
    await approval.onApproval(request(toolCall('e2', 'write_file', '{}')));
    expect(questions[1]).to.include(`+line ${PREVIEW_LINES - 1}\n[… 50 more lines not shown …]`).and.not.include(`+line ${PREVIEW_LINES}\n`);
  });

  it('a preview that fails is left out, and the question is still asked', async () => {
    const questions: string[] = [];
    const approval = new BashApproval({ ask: (q) => (questions.push(q), Promise.resolve('n')), renderer: quietRenderer(), preview: () => Promise.reject(new Error('boom')) });
    expect((await approval.onApproval(request(toolCall('e', 'edit_file', '{}')))).type).to.equal('deny');
    expect(questions[0]).to.match(/^Run edit_file with arguments/);
  });

  it('without a terminal, file changes are refused with their own reason and notice (once), bash with its own', async () => {
    const renderer = quietRenderer();
    const approval = new BashApproval({ ask: undefined, renderer });
    for (const name of ['write_file', 'edit_file']) expect(await approval.onApproval(request(toolCall(name, name, '{}')))).to.deep.equal({ type: 'deny', reason: NOBODY_TO_ASK_EDIT });
    expect(await approval.onApproval(request(toolCall('b', 'bash', '{}')))).to.deep.equal({ type: 'deny', reason: NOBODY_TO_ASK });
    expect(renderer.lines).to.deep.equal([NOBODY_TO_ASK_EDIT_NOTICE, NOBODY_TO_ASK_NOTICE]);
  });
});
