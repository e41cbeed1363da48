import { inputTokens, type AgentEvent, type AgentTurnResult, type ToolCall, type ToolResult } from '@kosong/core';
import { styleText } from 'node:util';
import { describeFailure, type Renderer } from './renderer.js';
import { Spinner } from './spinner.js';

type Style = Parameters<typeof styleText>[0];

/**
 * Human output: streamed text, thinking dimmed, tool calls and results as they happen, a spinner while
 * tools run, and a usage line per turn. With `fancy` off (not a TTY) there is no colour and no spinner.
 */
export class TerminalRenderer implements Renderer {
  private readonly spinner: Spinner | undefined;
  /** Ids of the tool calls still running. */
  private readonly running = new Set<string>();
  private column = 0;
  private lastKind: 'text' | 'think' | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly fancy: boolean,
  ) {
    this.spinner = fancy ? new Spinner(out) : undefined;
  }

  turnStart(): void {
    this.lastKind = undefined;
  }

  event(event: AgentEvent): void {
    switch (event.type) {
      case 'part':
        if (event.part.type === 'text') this.stream('text', event.part.text);
        else if (event.part.type === 'think') this.stream('think', event.part.think);
        return;
      case 'tool_call':
        this.running.add(event.toolCall.id);
        this.line(`${this.style('cyan', '→')} ${describeCall(event.toolCall)}`);
        this.updateSpinner();
        return;
      case 'tool_result':
        this.running.delete(event.result.toolCallId);
        this.line(describeResult(event.result, (s, t) => this.style(s, t)));
        this.updateSpinner();
        return;
      case 'retry':
        this.line(this.style('yellow', `↻ ${describeFailure(event.error)}; retrying in ${Math.round(event.delayMs)} ms (attempt ${event.nextAttempt})`));
        return;
      case 'step_end':
        this.updateSpinner();
        return;
      case 'step_start':
        return;
    }
  }

  turnEnd(result: AgentTurnResult): void {
    this.spinner?.stop();
    const usage = result.usage;
    const cached = usage.inputCacheRead > 0 ? ` (${usage.inputCacheRead.toLocaleString('en')} cached)` : '';
    const steps = `${result.steps} step${result.steps === 1 ? '' : 's'}`;
    const stopped = result.stopReason === 'max_steps' ? ' · stopped at the step limit' : '';
    this.line(
      this.style('gray', `— ${steps} · ${inputTokens(usage).toLocaleString('en')} input tokens${cached} · ${usage.output.toLocaleString('en')} output tokens${stopped}`),
    );
  }

  turnFailed(error: unknown): void {
    this.spinner?.stop();
    this.line(this.style('red', `✗ ${describeFailure(error)}`));
  }

  interrupted(): void {
    this.spinner?.stop();
    this.line(this.style('yellow', '⏹ interrupted: the step was aborted and not saved (Ctrl-C again to exit)'));
  }

  info(message: string): void {
    this.line(this.style('gray', message));
  }

  close(): void {
    this.spinner?.stop();
    this.running.clear();
  }

  private stream(kind: 'text' | 'think', text: string): void {
    if (text === '') return;
    this.spinner?.stop();
    if (this.lastKind !== kind && this.column > 0) this.write('\n');
    if (kind === 'think' && this.lastKind !== 'think') this.write(this.style('dim', 'thinking: '));
    this.lastKind = kind;
    this.write(kind === 'think' ? this.style(['dim', 'italic'], text) : text);
  }

  private line(text: string): void {
    this.spinner?.stop();
    if (this.column > 0) this.write('\n');
    this.write(`${text}\n`);
    this.lastKind = undefined;
  }

  private write(text: string): void {
    this.out.write(text);
    const newline = text.lastIndexOf('\n');
    this.column = newline === -1 ? this.column + text.length : text.length - newline - 1;
  }

  private updateSpinner(): void {
    if (!this.spinner) return;
    if (this.running.size === 0) this.spinner.stop();
    else this.spinner.start(this.style('gray', `running ${this.running.size} tool${this.running.size === 1 ? '' : 's'}…`));
  }

  private style(style: Style, text: string): string {
    return this.fancy ? styleText(style, text) : text;
  }
}

function describeCall(call: ToolCall): string {
  const args = call.function.arguments ?? '';
  return `${call.function.name}(${args.length > 120 ? `${args.slice(0, 117)}…` : args})`;
}

function describeResult(result: ToolResult, style: (s: Style, t: string) => string): string {
  const value = result.returnValue;
  const brief = value.display.find((block) => block.type === 'brief' && 'text' in block) as { text: string } | undefined;
  const summary = brief?.text ?? (typeof value.output === 'string' ? firstLine(value.output) : `${value.output.length} parts`);
  return value.isError
    ? style('red', `✗ ${value.message}`)
    : `${style('green', '✓')} ${summary}`;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  const more = text.length > line.length ? ` (${text.length.toLocaleString('en')} chars)` : '';
  return `${line.length > 100 ? `${line.slice(0, 97)}…` : line}${more}`;
}
