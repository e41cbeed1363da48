import type { HookErrorReport, HookErrorSink, StepEventContext, StepHooks } from '@kosong/core';
import type { Level, Logger } from 'pino';
import { createBaseLogger } from './base-logger.js';
import { FileDestination } from './file-destination.js';
import {
  cleanupFields,
  hookErrorFields,
  partFields,
  retryFields,
  stepEndFields,
  stepStartFields,
  toolCallFields,
  toolResultFields,
  type LogFields,
} from './log-records.js';
import type { LoggingOptions } from './logging-options.js';
import { SecretScrubber } from './secret-scrubber.js';

/** How many finished steps keep their logger, for hook failures and retries reported after their cleanup. */
const RECENT_STEPS = 256;

/** The fixed message of each record; the fields say the rest. */
const MESSAGES = {
  stepStarted: 'step started',
  part: 'part',
  toolCall: 'tool call',
  toolCallWithheld: 'tool call not executed',
  toolResult: 'tool result',
  toolError: 'tool error',
  stepCompleted: 'step completed',
  stepFailed: 'step failed',
  stepAborted: 'step aborted',
  cleanedUp: 'step cleaned up',
  leaked: 'tools leaked',
  retry: 'retrying step',
  hookFailed: 'hook failed',
} as const;

/**
 * Structured logs of kosong steps, through pino: {@link StepLogger.hooks} for the step events and
 * {@link StepLogger.hookErrorSink} for hook failures. Each step logs through a child logger bound to
 * its `stepId`, `tenant` (`null` for none), `provider` and `model`, so every line carries them.
 *
 * Levels: step start, completion, tool results and withheld tool calls `info`; tool calls and cleanup
 * `debug` (parts too, with `logParts`); a failed tool call, an aborted step, leaked tools, a retry and
 * a hook timeout `warn`; a failed step and a hook that threw or rejected `error`.
 *
 * Every record is scrubbed (see {@link SecretScrubber.scrubRecord}: the plugin's own record in place,
 * what it holds copied) before pino sees it, and every line again (`scrubLine`, when secrets are
 * configured) just before it is written. A record for a level that is off is not built at all.
 *
 * @example
 * const logs = new StepLogger({ secrets: [process.env.OPENAI_API_KEY ?? ''] });
 * await kernel.use(loggingPlugin(logs));
 * kernel.agent({ systemPrompt, onHookError: logs.hookErrorSink.report });
 */
export class StepLogger {
  /** The logger the per-step children derive from. */
  readonly logger: Logger;
  /** What scrubs every record and line. */
  readonly scrubber: SecretScrubber;
  /** The step hooks (bind with `ctx.bindHooks`, or give to a tenant). */
  readonly hooks: StepHooks;
  /** Logs every hook failure (bind with `ctx.bindHookErrorSink`). Never throws; `report` is bound. */
  readonly hookErrorSink: HookErrorSink;

  readonly #logContent: boolean;
  readonly #file: FileDestination | undefined;
  #closed = false;
  readonly #active = new Map<string, Logger>();
  /**
   * The ids and loggers of the last {@link RECENT_STEPS} steps cleaned up, a ring: `#recentNext` is
   * the oldest, overwritten next. Reports after a step's cleanup are rare, so they search it; a step
   * only writes to it. (A map of them cost each step a delete and an insert, and taking its oldest key
   * walked over every entry deleted before it.)
   */
  readonly #recentIds: (string | undefined)[] = new Array<string | undefined>(RECENT_STEPS).fill(undefined);
  readonly #recentLogs: (Logger | undefined)[] = new Array<Logger | undefined>(RECENT_STEPS).fill(undefined);
  #recentNext = 0;

  /** @throws {TypeError} for conflicting options or a secret that is not a string. */
  constructor(options: LoggingOptions = {}) {
    this.scrubber = new SecretScrubber({
      ...(options.secrets === undefined ? {} : { secrets: options.secrets }),
      ...(options.redactKeys === undefined ? {} : { redactKeys: options.redactKeys }),
    });
    const destination = options.destination;
    this.#file = options.logger === undefined && (typeof destination === 'string' || typeof destination === 'number') ? new FileDestination(destination) : undefined;
    try {
      this.logger = createBaseLogger(options, this.scrubber, this.#file);
    } catch (error) {
      void this.#file?.close();
      throw error;
    }
    this.#logContent = options.logContent ?? false;
    this.hooks = this.#createHooks(options.logParts ?? false);
    this.hookErrorSink = { report: (report) => this.#reportHookError(report) };
  }

  /**
   * Flushes the logger's destination. For a `destination` given as a file path or descriptor it
   * resolves once every line logged so far is on disk; for a stream it resolves when the stream's
   * own `flush` calls back (for pino's asynchronous `pino.destination({ sync: false })`, that may be
   * before its lines are written: give the path instead).
   */
  flush(): Promise<void> {
    if (this.#file !== undefined) return this.#file.flush();
    return new Promise((resolve, reject) => this.logger.flush((error) => (error ? reject(error) : resolve())));
  }

  /**
   * Flushes, then closes the log file the logger opened for a `destination` given as a path (a
   * descriptor or stream given by the caller is flushed, not closed). Later records are dropped.
   * Idempotent. {@link loggingPlugin} calls it when the kernel is disposed if it built this logger
   * from options; for a `StepLogger` given to it, it only calls {@link flush}.
   */
  close(): Promise<void> {
    this.#closed = true;
    return this.#file?.close() ?? this.flush();
  }

  #createHooks(logParts: boolean): StepHooks {
    const scrub = (text: string): string => this.scrubber.scrubString(text);
    const hooks: StepHooks = {
      onStepStart: (e) => this.#write(this.#open(e), 'info', stepStartFields(e), MESSAGES.stepStarted),
      onToolCall: (e) => {
        const log = this.#stepLogger(e);
        const level = e.executed ? 'debug' : 'info';
        if (this.#enabled(log, level)) this.#write(log, level, toolCallFields(e, this.#logContent ? scrub : undefined), e.executed ? MESSAGES.toolCall : MESSAGES.toolCallWithheld);
      },
      onToolResult: (e) => {
        const failed = e.result.returnValue.isError;
        const fields = toolResultFields(e, scrub, this.#logContent);
        this.#write(this.#stepLogger(e), failed ? 'warn' : 'info', fields, failed ? MESSAGES.toolError : MESSAGES.toolResult);
      },
      onStepEnd: (e) => {
        const fields = stepEndFields(e);
        const [level, message] =
          fields['outcome'] === 'completed'
            ? (['info', MESSAGES.stepCompleted] as const)
            : fields['outcome'] === 'aborted'
              ? (['warn', MESSAGES.stepAborted] as const)
              : (['error', MESSAGES.stepFailed] as const);
        this.#write(this.#stepLogger(e), level, fields, message);
      },
      onCleanup: (e) => {
        const log = this.#stepLogger(e);
        this.#close(e.stepId, log);
        const leaked = e.leaked.length > 0;
        const level = leaked ? 'warn' : 'debug';
        if (this.#enabled(log, level)) this.#write(log, level, cleanupFields(e), leaked ? MESSAGES.leaked : MESSAGES.cleanedUp);
      },
      // Sent after the failed attempt's cleanup: its logger is a recent one (or a transient child).
      onRetry: (e) => {
        const log = this.#knownStepLogger(e.stepId) ?? this.logger.child(this.#bindings(e.stepId, e.tenant, e.provider, e.model));
        this.#write(log, 'warn', retryFields(e), MESSAGES.retry);
      },
    };
    // Without an `onPart` hook the step skips the per-part hook path entirely.
    if (logParts) {
      hooks.onPart = (e) => {
        const log = this.#stepLogger(e);
        if (this.#enabled(log, 'debug')) this.#write(log, 'debug', partFields(e.part), MESSAGES.part);
      };
    }
    return hooks;
  }

  /** Whether a record at `level` would be written (check it before building a record that may be dropped). */
  #enabled(log: Logger, level: Level): boolean {
    return !this.#closed && log.isLevelEnabled(level);
  }

  /** Logs one record, scrubbed, if the level is enabled. */
  #write(log: Logger, level: Level, fields: LogFields, message: string): void {
    if (!this.#enabled(log, level)) return;
    log[level](this.scrubber.scrubRecord(fields), message);
  }

  #open(context: StepEventContext): Logger {
    const log = this.logger.child(this.#bindings(context.stepId, context.tenant, context.provider, context.model));
    this.#active.set(context.stepId, log);
    return log;
  }

  /** The step's logger; a new one if the step's start was missed (its cleanup will retire it). */
  #stepLogger(context: StepEventContext): Logger {
    return this.#knownStepLogger(context.stepId) ?? this.#open(context);
  }

  /** The logger of a running or recently finished step. */
  #knownStepLogger(stepId: string): Logger | undefined {
    return this.#active.get(stepId) ?? this.#recentStepLogger(stepId);
  }

  /** The logger of one of the last steps cleaned up (the latest, if the application reused the id). */
  #recentStepLogger(stepId: string): Logger | undefined {
    for (let back = 1; back <= RECENT_STEPS; back++) {
      const i = (this.#recentNext - back + RECENT_STEPS) % RECENT_STEPS;
      if (this.#recentIds[i] === stepId) return this.#recentLogs[i];
    }
    return undefined;
  }

  /** Moves a finished step's logger to the ring of recent steps. */
  #close(stepId: string, log: Logger): void {
    this.#active.delete(stepId);
    this.#recentIds[this.#recentNext] = stepId;
    this.#recentLogs[this.#recentNext] = log;
    this.#recentNext = (this.#recentNext + 1) % RECENT_STEPS;
  }

  #bindings(stepId: string, tenant: string | undefined, provider: string | null, model: string | null): object {
    return { stepId: this.#scrubOrNull(stepId), tenant: this.#scrubOrNull(tenant), provider: this.#scrubOrNull(provider), model: this.#scrubOrNull(model) };
  }

  #scrubOrNull(text: string | null | undefined): string | null {
    return typeof text === 'string' ? this.scrubber.scrubString(text) : null;
  }

  #reportHookError(report: HookErrorReport): void {
    try {
      const log =
        this.#knownStepLogger(report.stepId) ??
        this.logger.child(this.#bindings(report.stepId, report.tenant, report.provider ?? null, report.model ?? null));
      this.#write(log, report.kind === 'timeout' ? 'warn' : 'error', hookErrorFields(report), MESSAGES.hookFailed);
    } catch (failure) {
      // A sink must not throw: core would print the report, unscrubbed, to stderr.
      try {
        const reason = failure instanceof Error ? failure.message : String(failure);
        const hook = `${report.plugin}.${report.hook}`;
        process.stderr.write(this.scrubber.scrubString(`[kosong] logging could not log a failure of hook ${hook} in step ${report.stepId}: ${reason}\n`));
      } catch {
        // nowhere left to report to
      }
    }
  }
}
