import type { CleanupEvent, PartEvent, RetryEvent, StepEndEvent, StepHooks, StepStartEvent, ToolCallEvent, ToolResultEvent } from '@kosong/core';
import { inject, injectable } from '@kosong/core/kernel';
import { StepLogger } from './step-logger.js';

/**
 * The step hooks of a {@link StepLogger}, as a class the kernel creates with the logger injected
 * (`loggingPlugin` binds the logger under its class). Each hook is the logger's own function, taken
 * once at creation: no indirection per event, and no `onPart` unless the logger logs parts.
 */
@injectable()
export class StepLogHooks implements StepHooks {
  readonly onStepStart?: (event: StepStartEvent) => void | Promise<void>;
  readonly onPart?: (event: PartEvent) => void | Promise<void>;
  readonly onToolCall?: (event: ToolCallEvent) => void | Promise<void>;
  readonly onToolResult?: (event: ToolResultEvent) => void | Promise<void>;
  readonly onStepEnd?: (event: StepEndEvent) => void | Promise<void>;
  readonly onCleanup?: (event: CleanupEvent) => void | Promise<void>;
  readonly onRetry?: (event: RetryEvent) => void | Promise<void>;

  constructor(@inject(StepLogger) logs: StepLogger) {
    Object.assign(this, logs.hooks);
  }
}
