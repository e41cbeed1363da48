import { TimeoutBudgetError, type AgentEvent, type AgentTurnResult } from '@kosong/core';
import type { Renderer } from './renderer.js';

/** `--json`: one JSON object per line, for programs. Every line has a `type`. */
export class JsonRenderer implements Renderer {
  constructor(private readonly out: NodeJS.WritableStream) {}

  turnStart(input: string): void {
    this.emit({ type: 'turn_start', input });
  }

  event(event: AgentEvent): void {
    this.emit(event.type === 'retry' ? { ...event, error: errorJson(event.error) } : event);
  }

  turnEnd(result: AgentTurnResult): void {
    this.emit({ type: 'turn_end', ...result });
  }

  turnFailed(error: unknown): void {
    this.emit({ type: 'turn_failed', error: errorJson(error) });
  }

  interrupted(): void {
    this.emit({ type: 'interrupted' });
  }

  info(message: string): void {
    this.emit({ type: 'info', message });
  }

  /** Nothing to hold: `--json` never asks the user (see `BashApproval`). */
  pause(): void {}

  resume(): void {}

  close(): void {}

  private emit(value: object): void {
    this.out.write(`${JSON.stringify(value)}\n`);
  }
}

function errorJson(error: unknown): object {
  if (TimeoutBudgetError.isInstance(error)) return { name: error.name, message: error.message, budget: error.budget, limitMs: error.limitMs };
  if (error instanceof Error) {
    const statusCode = (error as { statusCode?: unknown }).statusCode;
    return { name: error.name, message: error.message, ...(typeof statusCode === 'number' ? { statusCode } : {}) };
  }
  return { name: 'Error', message: String(error) };
}
