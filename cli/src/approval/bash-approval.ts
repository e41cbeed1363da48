import type { ApprovalCallback, ApprovalDecision, ApprovalRequest, ToolCall } from '@kosong/core';
import type { Renderer } from '../render/renderer.js';
import { EDIT_TOOL_NAMES } from '../tools/file-edits.js';
import { escapeUnprintable, printableCommand } from './printable-command.js';

/**
 * Asks the user a question and reads the line answered: `undefined` at the end of input (Ctrl-D),
 * and when `signal` aborts (the question is then taken back).
 */
export type AskUser = (question: string, signal: AbortSignal) => Promise<string | undefined>;

/** Options of a {@link BashApproval}. */
export interface BashApprovalOptions {
  /** How to ask the user; none: nobody can be asked (no terminal, or `--json`), every call is denied. */
  readonly ask: AskUser | undefined;
  /** The session's output: held while a question waits, and where the notice about `--allow-bash` goes. */
  readonly renderer: Renderer;
  /**
   * What a call would do, shown above its question (e.g. the unified diff of an `edit_file` call:
   * `editPreview`); `undefined`: nothing. Shown with every unprintable character escaped (line
   * breaks kept), at most {@link PREVIEW_LINES} lines.
   */
  readonly preview?: (call: ToolCall) => Promise<string | undefined>;
}

/** Lines of a call's preview shown at most (the rest counted). */
export const PREVIEW_LINES = 200;

/** The tools whose calls change files: refused without a terminal with their own reason (`--allow-edits`). */
const EDIT_TOOLS: ReadonlySet<string> = new Set(EDIT_TOOL_NAMES);

/** The reason a model is given when the user answers no. */
export const USER_DENIED = 'the user denied running this command';
/** The reason a model is given when the user ends the input (Ctrl-D) at the question. */
export const NO_ANSWER = 'the user gave no answer (the input ended), so the command was not run';
/** The reason a model is given when nobody can be asked. */
export const NOBODY_TO_ASK =
  'bash commands need the approval of the user, and this run has no terminal to ask on; the user can let bash run without asking with --allow-bash';
/** The reason a model is given for a file change when nobody can be asked. */
export const NOBODY_TO_ASK_EDIT =
  'file changes need the approval of the user, and this run has no terminal to ask on; the user can let kosong change files without asking with --allow-edits';
/** The notice, once a session, when a file change was refused because nobody could be asked. */
export const NOBODY_TO_ASK_EDIT_NOTICE =
  'edits: a file change was refused; kosong asks before each write_file and edit_file only on a terminal (and not with --json): pass --allow-edits to let it change files without asking';
/** The one line the user is shown, once a session, when a call was refused because nobody could be asked. */
export const NOBODY_TO_ASK_NOTICE =
  'bash: a command was refused; kosong asks before each bash command only on a terminal (and not with --json): pass --allow-bash to let bash run without asking';

const ANSWERS = ' [y]es / [n]o / [a]lways for this session ';
const AGAIN = 'Please answer y (yes), n (no) or a (always for this session): ';

/**
 * The CLI's approval handler for `bash` (the calls `requireApproval` holds back): on a terminal it
 * asks `Run bash: <command>? [y]es / [n]o / [a]lways for this session`, one question at a time (calls
 * made at once wait their turn); `y` approves the call, `n` denies it (the model gets an error
 * result saying the user denied it), `a` approves it and every later call of the same tool in the
 * session without asking (an `a` for an edit never lets bash run unasked). A call with a preview
 * (an edit's diff) shows it above its question. The end of input at the question denies. The command is shown escaped (see
 * {@link printableCommand}). The session's output is held while the question waits, so streamed
 * text and the spinner do not draw over it. Without a way to ask, every call is denied, and the user
 * is told once how to allow bash.
 */
export class BashApproval {
  /** The tools the user answered `a` (always) for. */
  private readonly always = new Set<string>();
  /** The notices given (one per kind of refused call). */
  private readonly noticesGiven = new Set<string>();
  /** The questions asked so far, one after the other. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: BashApprovalOptions) {}

  /** The approval callback (`onApproval`) of the session's turns. */
  readonly onApproval: ApprovalCallback = (request) => {
    const decision = this.queue.then(() => this.decide(request));
    this.queue = decision.catch(() => undefined);
    return decision;
  };

  private async decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    if (request.signal.aborted) return { type: 'deny', reason: 'the turn was stopped' };
    const name = request.toolCall.function.name;
    if (this.always.has(name)) return { type: 'approve' };
    const { ask, renderer } = this.options;
    if (ask === undefined) {
      const edit = EDIT_TOOLS.has(name);
      const notice = edit ? NOBODY_TO_ASK_EDIT_NOTICE : NOBODY_TO_ASK_NOTICE;
      if (!this.noticesGiven.has(notice)) renderer.info(notice);
      this.noticesGiven.add(notice);
      return { type: 'deny', reason: edit ? NOBODY_TO_ASK_EDIT : NOBODY_TO_ASK };
    }
    const preview = await this.options.preview?.(request.toolCall).catch(() => undefined);
    let question = `${preview === undefined ? '' : `${shownPreview(preview)}\n`}${questionFor(request.toolCall)}`;
    renderer.pause();
    try {
      for (;;) {
        const answer = await ask(question, request.signal);
        if (answer === undefined) return { type: 'deny', reason: request.signal.aborted ? 'the turn was stopped' : NO_ANSWER };
        switch (answer.trim().toLowerCase()) {
          case 'y':
          case 'yes':
            return { type: 'approve' };
          case 'n':
          case 'no':
            return { type: 'deny', reason: USER_DENIED };
          case 'a':
          case 'always':
            this.always.add(name);
            return { type: 'approve' };
          default:
            question = AGAIN;
        }
      }
    } finally {
      renderer.resume();
    }
  }
}

/** A preview as shown: unprintable characters escaped (line breaks and tabs kept), at most {@link PREVIEW_LINES} lines. */
function shownPreview(preview: string): string {
  const lines = escapeUnprintable(preview, true).split('\n');
  if (lines.length <= PREVIEW_LINES) return lines.join('\n');
  return [...lines.slice(0, PREVIEW_LINES), `[… ${lines.length - PREVIEW_LINES} more lines not shown …]`].join('\n');
}

/** `Run bash: <command>? [y]es / …`, the command shown safely; another tool's arguments likewise. */
function questionFor(call: ToolCall): string {
  const name = call.function.name;
  const what = commandOf(call);
  const shown = printableCommand(what ?? call.function.arguments ?? '');
  const note = shown.escaped ? '(characters the terminal would not print as themselves are shown escaped, e.g. \\x1b for ESC)\n' : '';
  const subject = what === undefined ? `Run ${printableCommand(name).text} with arguments ${shown.text}?` : `Run ${name}: ${shown.text}?`;
  return `${note}${subject}${ANSWERS}`;
}

/** The `command` argument of a bash call, if the arguments are the object bash takes. */
function commandOf(call: ToolCall): string | undefined {
  if (call.function.name !== 'bash') return undefined;
  try {
    const args = JSON.parse(call.function.arguments ?? '') as unknown;
    const command = typeof args === 'object' && args !== null ? (args as { command?: unknown }).command : undefined;
    return typeof command === 'string' ? command : undefined;
  } catch {
    return undefined;
  }
}
