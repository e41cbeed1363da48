import {
  toolOk,
  type Tool,
  type ReplayPolicy,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type ToolReturnValue,
  type Toolset,
} from '@kosong/core';
import {
  DEFAULT_REPLAY_POLICY,
  describeError,
  isToolReturnValue,
  parseToolArguments,
  toolInvalidReturn,
  toolNotFound,
  toolParseError,
  toolRuntimeError,
  toolValidateError,
} from '@kosong/core/toolset-kit';
import pLimit, { type LimitFunction } from 'p-limit';
import type { ArgumentCheck, CallableTool } from './callable-tool.js';
import { ToolDefinitionError, ToolNameConflictError, UnknownToolError } from './errors.js';
import { truncateOutput } from './output-limit.js';
import { checkKnownOptions, checkNeedsApproval } from './approval-option.js';
import { checkReplay } from './replay-option.js';
import { checkLimits, type ToolLimits } from './tool-limits.js';
import { describeReturnType, toolAborted, toolAbortedBeforeStart, toolTimedOut } from './tool-results.js';
import { formatIssues } from '@kosong/core/json-schema';

/** Options of a {@link SimpleToolset}. */
export interface SimpleToolsetOptions extends ToolLimits {
  /**
   * How many calls may run at once, over every step that uses this toolset; further calls wait
   * in a queue (first come, first served). A call whose step aborts while it waits never runs.
   * Default: no limit.
   */
  readonly maxConcurrency?: number;
  /** What to call this toolset in errors, e.g. when {@link combineToolsets} finds a name twice. */
  readonly name?: string;
}

/** Options of {@link SimpleToolset.add}. */
export interface AddToolOptions {
  /** Replace a tool of the same name, in its position (default: adding a name twice throws). */
  readonly replace?: boolean;
}

/** The longest delay `setTimeout` honours (longer ones fire at once); a longer timeout means none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A toolset of {@link CallableTool}s, in insertion order. Calls run concurrently, each as soon as
 * it is handed over (while the model is still streaming), within the optional concurrency limit.
 *
 * What the model gets for each call:
 * - an unknown tool: ``Tool `name` not found``;
 * - arguments that are not JSON: `Error parsing JSON arguments: …` (raw control characters inside
 *   strings are accepted; absent or empty arguments are `{}`);
 * - arguments the schema rejects: `Error validating JSON arguments: …`, one `path: problem` line
 *   per issue; arguments nested deeper than validation can recurse (a recursive schema):
 *   `Error validating JSON arguments: (root): nested too deeply to validate`;
 * - `execute` throws or rejects: `Error running tool: …`;
 * - `execute` returns something that is not a `ToolReturnValue` nor a string: `Invalid return type: …`;
 * - the call runs longer than its timeout: ``Tool `name` timed out after N ms`` at once, whether or
 *   not the tool honours its (aborted) signal;
 * - the step aborts while the call waits for a slot: `Tool call was not executed: …` at once;
 *   while it runs: ``Tool `name` was cancelled: …`` when the tool settles (so that a tool ignoring its
 *   signal shows up in the step's cleanup report as leaked);
 * - otherwise what the tool returned, its text capped at `maxOutputChars`.
 *
 * Unknown tools and bad arguments are answered synchronously; the rest asynchronously. `handle`
 * never throws and its promise never rejects.
 */
export class SimpleToolset implements Toolset {
  /** The name given in the options, for error messages. */
  readonly name: string | undefined;
  private readonly byName = new Map<string, CallableTool>();
  private definitions: readonly Tool[] | undefined;
  private readonly defaults: ToolLimits;
  private readonly limit: LimitFunction | undefined;
  private active = 0;
  private waiting = 0;

  /**
   * @param tools - the initial tools, in order.
   * @throws ToolNameConflictError if two tools have the same name; ToolDefinitionError for invalid options.
   */
  constructor(tools: Iterable<CallableTool> = [], options: SimpleToolsetOptions = {}) {
    this.name = options.name;
    const owner = options.name ?? 'SimpleToolset';
    checkKnownOptions(owner, options, TOOLSET_OPTIONS, 'SimpleToolset');
    this.defaults = checkLimits(owner, options);
    const { maxConcurrency } = options;
    if (maxConcurrency !== undefined) {
      if (!((Number.isInteger(maxConcurrency) && maxConcurrency > 0) || maxConcurrency === Infinity)) {
        throw new ToolDefinitionError(owner, `maxConcurrency must be a positive integer (or Infinity), got ${String(maxConcurrency)}`);
      }
      if (maxConcurrency < Infinity) this.limit = pLimit(maxConcurrency);
    }
    for (const tool of tools) this.add(tool);
  }

  /** The tool definitions the model is told about, in insertion order (a new array after each change). */
  get tools(): readonly Tool[] {
    this.definitions ??= Object.freeze(
      [...this.byName.values()].map((tool) => Object.freeze({ name: tool.name, description: tool.description, parameters: tool.parameters })),
    );
    return this.definitions;
  }

  /** How many calls are running now (including timed-out calls whose tool has not settled yet). */
  get running(): number {
    return this.active;
  }

  /** How many calls are waiting for a free slot. */
  get queued(): number {
    return this.waiting;
  }

  /**
   * Adds a tool at the end. Calls already running are not affected by later changes.
   *
   * @throws ToolNameConflictError if a tool of that name exists (unless `replace` is set: then the
   *   new tool takes the old one's position); ToolDefinitionError if `tool` is not a {@link CallableTool}
   *   (or its `replay` is no replay policy).
   */
  add(tool: CallableTool, options: AddToolOptions = {}): this {
    assertCallableTool(tool);
    checkKnownOptions(tool.name, options, ADD_OPTIONS, 'SimpleToolset.add');
    if (this.byName.has(tool.name) && !options.replace) {
      throw new ToolNameConflictError(tool.name, [`the toolset${this.name ? ` "${this.name}"` : ''}`, 'the tool being added']);
    }
    this.byName.set(tool.name, tool);
    this.definitions = undefined;
    return this;
  }

  /**
   * Removes the tool of that name. Calls of it already running go on.
   *
   * @throws UnknownToolError if there is no such tool.
   */
  remove(name: string): this {
    if (!this.byName.delete(name)) throw new UnknownToolError(name, [...this.byName.keys()]);
    this.definitions = undefined;
    return this;
  }

  /** Whether a tool of that name is in the toolset. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The tool of that name, if any. */
  get(name: string): CallableTool | undefined {
    return this.byName.get(name);
  }

  /**
   * The replay policy of a call: its tool's `replay` (see {@link CallableTool.replay}); `'never'` for
   * a tool that declares none and for a name the toolset does not have (now).
   */
  replayPolicy(toolCall: ToolCall): ReplayPolicy {
    return this.byName.get(toolCall.function.name)?.replay ?? DEFAULT_REPLAY_POLICY;
  }

  /**
   * Whether a call needs approval: its tool's `needsApproval` (see {@link CallableTool.needsApproval}).
   * A function gets the arguments as `validate` makes them; a call whose arguments are not JSON or
   * do not validate needs none, whatever its tool says (it does not run: the model gets the error result). A function that
   * throws or rejects makes the step give the model an error result instead of running the call.
   */
  needsApproval(toolCall: ToolCall, context: ToolContext): boolean | Promise<boolean> {
    const tool = this.byName.get(toolCall.function.name);
    const rule = tool?.needsApproval;
    if (tool === undefined || rule === undefined || rule === false) return false;
    const parsed = parseToolArguments(toolCall.function.arguments);
    if (!parsed.ok) return false;
    return Promise.resolve(tool.validate(parsed.value)).then(async (check) => check.ok && (rule === true || (await rule(check.value, context)) === true));
  }

  /** Handles one call (see the class documentation for what the model gets). Never throws. */
  handle(toolCall: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    const name = toolCall.function.name;
    const tool = this.byName.get(name);
    if (!tool) return resultOf(toolCall, toolNotFound(name));
    const parsed = parseToolArguments(toolCall.function.arguments);
    if (!parsed.ok) return resultOf(toolCall, toolParseError(parsed.error));
    let check: ArgumentCheck<unknown> | Promise<ArgumentCheck<unknown>>;
    try {
      check = tool.validate(parsed.value);
    } catch (error) {
      return resultOf(toolCall, validatorFailed(error));
    }
    if (isThenable(check)) {
      return Promise.resolve(check).then(
        (settled) => this.validated(tool, settled, toolCall, context),
        (error: unknown) => resultOf(toolCall, validatorFailed(error)),
      );
    }
    return this.validated(tool, check, toolCall, context);
  }

  private validated(tool: CallableTool, check: ArgumentCheck<unknown>, call: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    if (!check.ok) return resultOf(call, toolValidateError(formatIssues(check.issues)));
    if (context.signal.aborted) return resultOf(call, toolAbortedBeforeStart(context.signal.reason));
    return this.limit ? this.enqueue(this.limit, tool, check.value, call, context) : this.start(tool, check.value, call, context).result;
  }

  /** Waits for a free slot, unless the step aborts first; holds the slot until the tool has really settled. */
  private enqueue(limit: LimitFunction, tool: CallableTool, args: unknown, call: ToolCall, context: ToolContext): Promise<ToolResult> {
    const { signal } = context;
    return new Promise<ToolResult>((resolve) => {
      let waiting = true;
      this.waiting++;
      const onAbort = (): void => {
        waiting = false;
        this.waiting--;
        resolve(resultOf(call, toolAbortedBeforeStart(signal.reason)));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void limit(() => {
        signal.removeEventListener('abort', onAbort);
        if (!waiting) return undefined;
        waiting = false;
        this.waiting--;
        const run = this.start(tool, args, call, context);
        void run.result.then(resolve);
        return run.settled;
      });
    });
  }

  /**
   * Runs the tool now. `result` resolves with what the model gets (at the timeout, at the latest);
   * `settled` when the tool has really finished. Neither ever rejects.
   */
  private start(tool: CallableTool, args: unknown, call: ToolCall, context: ToolContext): { result: Promise<ToolResult>; settled: Promise<void> } {
    const stepSignal = context.signal;
    const timeoutMs = tool.timeoutMs ?? this.defaults.timeoutMs ?? Infinity;
    const maxChars = tool.maxOutputChars ?? this.defaults.maxOutputChars ?? Infinity;
    const controller = new AbortController();
    let deliver!: (result: ToolResult) => void;
    const result = new Promise<ToolResult>((resolve) => (deliver = resolve));
    let delivered = false;
    const once = (value: ToolReturnValue): void => {
      if (delivered) return;
      delivered = true;
      deliver(resultOf(call, value));
    };

    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        controller.abort(new DOMException(`Tool \`${tool.name}\` timed out after ${timeoutMs} ms`, 'TimeoutError'));
        once(toolTimedOut(tool.name, timeoutMs));
      }, timeoutMs);
    }
    // Once the step aborts, it governs: the timeout is off, and the aborted result comes when the tool settles.
    const onStepAbort = (): void => {
      clearTimeout(timer);
      controller.abort(stepSignal.reason);
    };
    stepSignal.addEventListener('abort', onStepAbort, { once: true });

    this.active++;
    // The step's context (index, idempotency key, run context), with a signal that the timeout aborts too.
    const toolContext: ToolContext = { ...context, signal: controller.signal };
    const settled = (async () => {
      let value: ToolReturnValue;
      try {
        await undefined; // the tool's synchronous part runs after handle() has returned
        if (controller.signal.aborted) throw controller.signal.reason; // aborted in between: do not start
        value = toReturnValue(await tool.execute(args, toolContext));
        value = truncateOutput(value, maxChars);
      } catch (error) {
        value = toolRuntimeError(describeError(error));
      }
      this.active--;
      clearTimeout(timer);
      stepSignal.removeEventListener('abort', onStepAbort);
      once(stepSignal.aborted ? toolAborted(tool.name, stepSignal.reason) : value);
    })();
    return { result, settled };
  }
}

/**
 * What the model gets when `validate` throws: arguments nested deeper than the validator can
 * recurse (a recursive schema) are invalid arguments; any other throw is the tool's own failure.
 */
function validatorFailed(error: unknown): ToolReturnValue {
  if (isStackOverflow(error)) return toolValidateError(formatIssues([{ path: [], message: TOO_DEEP }]));
  return toolRuntimeError(describeError(error));
}

/** The issue reported for arguments too deeply nested to validate. */
const TOO_DEEP = 'nested too deeply to validate';

/** Whether `error` is the engine's stack overflow (V8: a RangeError "Maximum call stack size exceeded"). */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function resultOf(call: ToolCall, returnValue: ToolReturnValue): ToolResult {
  return { toolCallId: call.id, returnValue };
}

function toReturnValue(output: unknown): ToolReturnValue {
  if (typeof output === 'string') return toolOk({ output });
  if (isToolReturnValue(output)) return output;
  return toolInvalidReturn(describeReturnType(output));
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function assertCallableTool(tool: CallableTool): void {
  const candidate = tool as Partial<CallableTool> | null | undefined;
  const name = typeof candidate?.name === 'string' ? candidate.name : String(candidate?.name);
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.name !== 'string' || candidate.name === '') {
    throw new ToolDefinitionError(name, 'not a tool: a CallableTool needs a non-empty name (use defineTool or defineJsonSchemaTool)');
  }
  if (typeof candidate.validate !== 'function' || typeof candidate.execute !== 'function') {
    throw new ToolDefinitionError(name, 'not a CallableTool: it needs validate() and execute() (use defineTool or defineJsonSchemaTool)');
  }
  checkReplay(name, candidate.replay);
  checkNeedsApproval(name, candidate.needsApproval);
}

/** The options of a toolset; any other is refused. */
const TOOLSET_OPTIONS: ReadonlySet<string> = new Set(['name', 'maxConcurrency', 'timeoutMs', 'maxOutputChars']);

/** The options of {@link SimpleToolset.add}. */
const ADD_OPTIONS: ReadonlySet<string> = new Set(['replace']);
