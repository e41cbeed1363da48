import { inputTokens, type AgentEvent, type AgentTurnResult, type ToolCall, type ToolResult } from '@kosong/core';
import { styleText } from 'node:util';
import type { TerminalCapabilities } from '../terminal/terminal-capabilities.js';
import { escapeUnprintable, printableCommand } from '../approval/printable-command.js';
import { formatCount } from '../format-count.js';
import { describeFailure, type Renderer } from './renderer.js';
import { Spinner } from './spinner.js';
import { WordWrapper, wrapText } from './word-wrapper.js';

type Style = Parameters<typeof styleText>[0];

/** Tools whose results show the start of their output under the result line. */
const PREVIEWED_TOOLS: ReadonlySet<string> = new Set(['bash']);
/** Lines of output a preview shows at most. */
const PREVIEW_LINES = 5;
/** Characters of a preview line at most, when the terminal width is unknown. */
const PREVIEW_LINE_CHARS = 100;

/** A tool call of the turn, as the output names it: `#<n> <tool>`. */
interface CallLabel {
  readonly label: string;
  readonly name: string;
}

/**
 * Human output: streamed text (wrapped at word boundaries at the terminal width), thinking dimmed,
 * tool calls and results as they happen — each result naming its call (`#2 read_file`), `bash`
 * results with the start of their output — a spinner while tools run, and a usage line per turn.
 * Colour and spinner only where {@link TerminalCapabilities.decorations} allows; wrapping only where
 * the width is known (not when stdout is a file or a pipe).
 */
export class TerminalRenderer implements Renderer {
  private readonly spinner: Spinner | undefined;
  /** Ids of the tool calls still running. */
  private readonly running = new Set<string>();
  /** The calls of the turn by id, numbered in the order they were made. */
  private readonly calls = new Map<string, CallLabel>();
  private readonly wrapper: WordWrapper;
  private column = 0;
  private lastKind: 'text' | 'think' | undefined;
  /** Output held back while a question waits (see {@link pause}); `undefined`: not paused. */
  private held: string[] | undefined;
  /**
   * Results that came while a streamed line was unfinished: printed when the line ends (a newline
   * in the text, the next call, the step's end), so a tool line never breaks a streamed sentence.
   */
  private deferredResults: ToolResult[] = [];

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly terminal: TerminalCapabilities,
    /** `secondCtrlCExits`: the line of an interrupted turn says that Ctrl-C again exits (chat; `run` has exited). */
    private readonly options: { readonly secondCtrlCExits?: boolean } = {},
  ) {
    this.spinner = terminal.decorations ? new Spinner(out) : undefined;
    this.wrapper = new WordWrapper(() => terminal.columns());
  }

  turnStart(): void {
    this.lastKind = undefined;
    this.calls.clear();
  }

  event(event: AgentEvent): void {
    switch (event.type) {
      case 'part':
        if (event.part.type === 'text') this.stream('text', event.part.text);
        else if (event.part.type === 'think') this.stream('think', event.part.think);
        return;
      case 'tool_call': {
        this.flushResults();
        const call = this.label(event.toolCall);
        this.running.add(event.toolCall.id);
        this.line(`→ ${call.label}${describeArguments(event.toolCall)}`, { symbol: 'cyan' });
        this.updateSpinner();
        return;
      }
      case 'tool_result':
        this.running.delete(event.result.toolCallId);
        if (this.lastKind === 'text') this.deferredResults.push(event.result);
        else this.result(event.result);
        this.updateSpinner();
        return;
      case 'retry':
        this.line(`↻ ${describeFailure(event.error)}; retrying in ${Math.round(event.delayMs)} ms (attempt ${event.nextAttempt})`, { all: 'yellow' });
        return;
      case 'step_end':
        this.flushResults();
        this.updateSpinner();
        return;
      case 'step_start':
        return;
    }
  }

  turnEnd(result: AgentTurnResult): void {
    this.flushResults();
    this.spinner?.stop();
    const usage = result.usage;
    const cached = usage.inputCacheRead > 0 ? ` (${formatCount(usage.inputCacheRead)} cached)` : '';
    const steps = `${result.steps} step${result.steps === 1 ? '' : 's'}`;
    const stopped = result.stopReason === 'max_steps' ? ' · stopped at the step limit' : result.stopReason === 'approval_required' ? ' · waiting for approval' : '';
    for (const pending of result.pendingApprovals ?? []) {
      const call = this.label(pending.toolCall);
      this.line(`⏸ ${call.label}${describeArguments(pending.toolCall)} waits for approval: it has not run`, { all: 'yellow' });
    }
    this.line(`— ${steps} · ${formatCount(inputTokens(usage))} input tokens${cached} · ${formatCount(usage.output)} output tokens${stopped}`, {
      all: 'gray',
    });
  }

  turnFailed(error: unknown): void {
    this.flushResults();
    this.spinner?.stop();
    this.line(`✗ ${describeFailure(error)}`, { all: 'red' });
  }

  interrupted(): void {
    this.flushResults();
    this.spinner?.stop();
    this.line(`⏹ interrupted: the step was aborted${this.options.secondCtrlCExits === true ? ' (Ctrl-C again to exit)' : ''}`, { all: 'yellow' });
  }

  info(message: string): void {
    this.flushResults();
    for (const line of message.split('\n')) this.line(line, { all: 'gray' });
  }

  pause(): void {
    if (this.held) return;
    this.flushResults();
    this.spinner?.stop();
    this.endStream();
    if (this.column > 0) this.write('\n');
    this.wrapper.reset();
    this.lastKind = undefined;
    this.held = [];
  }

  resume(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    if (held.length > 0) this.out.write(held.join(''));
    this.updateSpinner();
  }

  close(): void {
    this.flushResults();
    this.resume();
    this.spinner?.stop();
    this.endStream();
    this.running.clear();
  }

  private label(call: ToolCall): CallLabel {
    let label = this.calls.get(call.id);
    if (!label) {
      label = { label: `#${this.calls.size + 1} ${call.function.name}`, name: call.function.name };
      this.calls.set(call.id, label);
    }
    return label;
  }

  private result(result: ToolResult): void {
    const call = this.calls.get(result.toolCallId) ?? { label: result.toolCallId, name: '' };
    const value = result.returnValue;
    if (result.deferred === true) {
      this.line(`⏸ ${call.label}: waits for approval`, { all: 'yellow' });
      return;
    }
    // What a tool wrote (a command's output, a command in a brief) is printed escaped: it cannot act on the terminal.
    if (value.isError) this.line(`✗ ${call.label}: ${escapeUnprintable(value.message, true)}`, { all: 'red' });
    else this.line(`✓ ${call.label}: ${escapeUnprintable(summary(value), true)}`, { symbol: 'green' });
    if (PREVIEWED_TOOLS.has(call.name) && typeof value.output === 'string') {
      for (const line of preview(value.output, this.terminal.columns())) this.write(`${this.style('gray', line)}\n`);
    }
  }

  private stream(kind: 'text' | 'think', text: string): void {
    if (text === '') return;
    this.spinner?.stop();
    if (this.lastKind !== kind) {
      this.endStream();
      if (this.column > 0) this.write('\n');
      this.wrapper.reset();
      if (kind === 'think') this.write(this.style('dim', this.wrapper.push('thinking: ')));
    }
    this.lastKind = kind;
    // Results held while the line was unfinished go out where it ends.
    const newline = kind === 'text' && this.deferredResults.length > 0 ? text.indexOf('\n') : -1;
    if (newline !== -1) {
      this.streamed(kind, text.slice(0, newline + 1));
      this.flushResults();
      this.stream(kind, text.slice(newline + 1));
      return;
    }
    this.streamed(kind, text);
  }

  private streamed(kind: 'text' | 'think', text: string): void {
    const wrapped = this.wrapper.push(text);
    if (wrapped !== '') this.write(kind === 'think' ? this.style(['dim', 'italic'], wrapped) : wrapped);
  }

  /** Prints the results held back (see {@link deferredResults}). */
  private flushResults(): void {
    if (this.deferredResults.length === 0) return;
    const results = this.deferredResults;
    this.deferredResults = [];
    for (const result of results) this.result(result);
  }

  /** Writes the word the wrapper holds back, at the end of a run of streamed text. */
  private endStream(): void {
    const rest = this.wrapper.flush();
    if (rest !== '') this.write(this.lastKind === 'think' ? this.style(['dim', 'italic'], rest) : rest);
  }

  /**
   * A whole line, wrapped at the terminal width (continuation lines indented), then styled: `all`
   * of it, or only its leading `symbol` character.
   */
  private line(text: string, style: { readonly all?: Style; readonly symbol?: Style } = {}): void {
    this.spinner?.stop();
    this.endStream();
    if (this.column > 0) this.write('\n');
    const wrapped = wrapText(text, this.terminal.columns(), '  ');
    const styled = style.all ? this.style(style.all, wrapped) : style.symbol ? this.style(style.symbol, wrapped.slice(0, 1)) + wrapped.slice(1) : wrapped;
    this.write(`${styled}\n`);
    this.wrapper.reset();
    this.lastKind = undefined;
  }

  private write(text: string): void {
    if (this.held) this.held.push(text);
    else this.out.write(text);
    const newline = text.lastIndexOf('\n');
    this.column = newline === -1 ? this.column + text.length : text.length - newline - 1;
  }

  private updateSpinner(): void {
    if (!this.spinner || this.held) return;
    if (this.running.size === 0) this.spinner.stop();
    else this.spinner.start(this.style('gray', `running ${this.running.size} tool${this.running.size === 1 ? '' : 's'}…`));
  }

  private style(style: Style, text: string): string {
    return this.terminal.decorations ? styleText(style, text) : text;
  }
}

function describeArguments(call: ToolCall): string {
  const args = printableCommand(call.function.arguments ?? '').text;
  return `(${args.length > 120 ? `${args.slice(0, 117)}…` : args})`;
}

function summary(value: ToolResult['returnValue']): string {
  const brief = value.display.find((block) => block.type === 'brief' && 'text' in block) as { text: string } | undefined;
  return brief?.text ?? (typeof value.output === 'string' ? firstLine(value.output) : `${value.output.length} parts`);
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  const more = text.length > line.length ? ` (${formatCount(text.length)} chars)` : '';
  return `${line.length > 100 ? `${line.slice(0, 97)}…` : line}${more}`;
}

/** The first lines of a tool's output, indented, each cut to fit, and how many more there are. */
function preview(output: string, columns: number | undefined): string[] {
  const lines = output.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const max = Math.max(10, (columns ?? PREVIEW_LINE_CHARS + 4) - 4);
  const shown = lines.slice(0, PREVIEW_LINES).map((raw) => {
    const line = escapeUnprintable(raw.replace(/\r$/, ''), true);
    return `  │ ${line.length > max ? `${line.slice(0, max - 1)}…` : line}`;
  });
  if (lines.length > PREVIEW_LINES) shown.push(`  │ … ${formatCount(lines.length - PREVIEW_LINES)} more line${lines.length - PREVIEW_LINES === 1 ? '' : 's'}`);
  return shown;
}
