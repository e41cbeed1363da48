import {
  Kernel,
  LinearContext,
  TimeoutBudgetError,
  definePlugin,
  requireApproval,
  type Agent,
  type AgentContext,
  type AgentEvent,
  type ApprovalCallback,
  type GenerationOptions,
  type Message,
  type ProviderPluginFactory,
  type TimeoutBudgets,
  type Toolset,
} from '@kosong/core';
import { combineToolsets } from '@kosong/toolset-simple';
import type { UsageLedger } from '@kosong/core/kernel';
import { describeFailure, type Renderer } from './render/renderer.js';
import { builtinToolset } from './tools/builtin-tools.js';
import { conversationLines } from './sessions/session-choice.js';

/** How a CLI session is set up. */
export interface CliSessionOptions {
  /** The provider to use, from the catalog. */
  readonly provider: ProviderPluginFactory;
  readonly renderer: Renderer;
  readonly cwd: string;
  readonly systemPrompt: string;
  readonly maxSteps: number;
  /** `--allow-bash`: bash commands run without asking. Otherwise each needs the approval of {@link onApproval}. */
  readonly allowBash: boolean;
  /** `--allow-edits`: `write_file` and `edit_file` change files without asking. Otherwise each change needs the approval of {@link onApproval}. */
  readonly allowEdits?: boolean;
  /** Decides about the bash calls (without `allowBash`), e.g. a `BashApproval`'s handler; none: they are denied. */
  readonly onApproval?: ApprovalCallback | undefined;
  /** A JSONL file to resume from and save to. */
  readonly sessionFile?: string | undefined;
  /** Show the conversation restored from the file before the first turn (a saved session gone on with). */
  readonly showConversation?: boolean;
  /** Generation options of every step (`--max-tokens`, `--temperature`); the provider refuses what it cannot do. */
  readonly generation?: GenerationOptions | undefined;
  /** Time budgets of every turn (`--timeout`: `turnMs`, `--tool-timeout`: `toolCallMs`). */
  readonly timeouts?: TimeoutBudgets | undefined;
  /**
   * Where each step's usage is recorded (the CLI's usage file, see `UsageFileLedger`); default: in
   * memory. A ledger with a `close` is closed with the session (its pending records written).
   */
  readonly usageLedger?: (UsageLedger & { close?(): Promise<void> }) | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The MCP servers' tools, offered beside the built-in ones; closed with the session. */
  readonly mcp?: (Toolset & { close(): Promise<void> }) | undefined;
}

/** What the model is told at the end of its reply that Ctrl-C cut off (the reply so far before it). */
export const INTERRUPTED_REPLY = '[The user interrupted this reply (Ctrl-C).]';
/** The reply recorded for a turn found cut off without one (its process ended while the model streamed). */
export const CUT_OFF_REPLY = '[No reply: the turn was cut off before the model answered (the kosong process running it ended).]';
/** What the user is told when a turn starts after such a turn. */
export const CUT_OFF_TURN_LINE = 'the last turn was cut off before the model answered (its process ended): recorded as interrupted';

/**
 * How a turn ended: `max_steps` is a turn that stopped at the step limit (`--max-steps`),
 * `timed_out` one that ran out of its time budget (`--timeout`).
 */
export type TurnOutcome = 'completed' | 'failed' | 'max_steps' | 'interrupted' | 'timed_out';

/** An agent session of the CLI: a kernel with the chosen provider and the built-in tools. */
export class CliSession {
  private running: AbortController | undefined;

  private constructor(
    private readonly kernel: Kernel,
    private readonly agent: Agent,
    private readonly renderer: Renderer,
    private readonly usageLedger: { close?(): Promise<void> } | undefined,
  ) {}

  /**
   * Builds the kernel (provider plugin from the environment, built-in tools), and restores the
   * session file if there is one.
   *
   * @throws when the provider cannot be set up (e.g. a missing API key), or the session file cannot be
   *   used: not a session (`ContextCorruptedError`), in a directory that does not exist, not a
   *   regular file, or held by another process (`ContextFileError`, problem `locked`). The file is
   *   then left as it was. The session's lock is held from here until {@link CliSession.close}.
   */
  static async open(options: CliSessionOptions): Promise<CliSession> {
    // The session file first: a file that cannot be used is a setup error before anything starts.
    const context = new LinearContext(options.sessionFile);
    const report = await context.restore();
    const kernel = new Kernel(options.usageLedger === undefined ? {} : { usageLedger: options.usageLedger });
    const builtin = builtinToolset({ cwd: options.cwd, offerBash: true, allowEdits: options.allowEdits === true });
    // Without --allow-bash, every bash call waits for the approval handler's decision (core's approval gate).
    const gated = options.allowBash ? builtin : requireApproval(builtin, ['bash']);
    const { mcp } = options;
    const toolset = mcp === undefined ? gated : combineToolsets({ name: 'built-in tools', toolset: gated }, { name: 'MCP servers', toolset: mcp });
    const tools = definePlugin({
      name: 'builtin-tools',
      setup: (ctx) => {
        if (mcp !== undefined) ctx.onDispose(() => mcp.close());
        ctx.bindToolset(toolset);
      },
    });
    await kernel.use(options.provider.create(options.env), tools);
    const agent = kernel.agent({
      provider: options.provider.name,
      systemPrompt: options.systemPrompt,
      maxSteps: options.maxSteps,
      context,
      onApproval: options.onApproval ?? denyAll,
      ...(options.generation === undefined ? {} : { generation: options.generation }),
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
    });
    if (report.messages > 0 && options.showConversation === true) for (const line of conversationLines(context.history)) options.renderer.info(line);
    if (report.messages > 0) options.renderer.info(`resumed ${report.messages} messages from ${options.sessionFile}`);
    if (report.tornLineSavedTo !== undefined) {
      options.renderer.info(`the last line of the session file was cut short (a crash?); it was moved to ${report.tornLineSavedTo}`);
    }
    return new CliSession(kernel, agent, options.renderer, options.usageLedger);
  }

  /** Whether the conversation has messages (in its session file, when it has one). */
  get saved(): boolean {
    return this.agent.context.history.length > 0;
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /**
   * Runs one turn; never throws (failures are rendered and reported as the outcome).
   *
   * The conversation stays coherent when a turn is cut off: a step whose calls started is completed
   * by the next turn (see {@link cutOffStep}); a reply cut off before any call started — by Ctrl-C,
   * a failure, or the end of the process — is recorded as an interrupted assistant message
   * (`partial`), so that no user message is left without a reply and the next one follows it.
   */
  async turn(input: string, messages?: readonly Message[]): Promise<TurnOutcome> {
    const controller = new AbortController();
    this.running = controller;
    this.renderer.turnStart(input);
    const cutOff = cutOffStep(this.agent.context);
    if (cutOff !== undefined) this.renderer.info(cutOff);
    else if (await this.recordReply(CUT_OFF_REPLY)) this.renderer.info(CUT_OFF_TURN_LINE);
    /** The text the model has streamed in the step that runs: what the user saw of a reply Ctrl-C cuts off. */
    let streamed = '';
    const onEvent = (event: AgentEvent): void => {
      if (event.type === 'step_start') streamed = '';
      else if (event.type === 'part' && event.part.type === 'text') streamed += event.part.text;
      this.renderer.event(event);
    };
    try {
      // `messages`: what the turn sends instead of the text (a message with MCP resources, a prompt's messages).
      const result = await this.agent.run(messages ?? input, { signal: controller.signal, onEvent });
      this.renderer.turnEnd(result);
      return result.stopReason === 'max_steps' ? 'max_steps' : 'completed';
    } catch (error) {
      if (controller.signal.aborted) {
        await this.recordReply(streamed === '' ? INTERRUPTED_REPLY : `${streamed}\n\n${INTERRUPTED_REPLY}`);
        this.renderer.interrupted();
        return 'interrupted';
      }
      await this.recordReply(`${streamed === '' ? '' : `${streamed}\n\n`}[No reply: the turn failed (${describeFailure(error)}).]`);
      this.renderer.turnFailed(error);
      return TimeoutBudgetError.isInstance(error) && error.budget === 'turn' ? 'timed_out' : 'failed';
    } finally {
      this.running = undefined;
    }
  }

  /**
   * Records `text` as the model's (interrupted) reply when the conversation waits for one — it ends
   * with a user message, or with the tool results of a whole step — and no step of it is left to
   * complete (the call ledger's open step, a step waiting for approval: the next turn completes
   * those). Returns whether it did. A failure to write is said, not thrown: the turn goes on.
   */
  private async recordReply(text: string): Promise<boolean> {
    const context = this.agent.context;
    if (context.ledger?.openStep !== undefined || context.pendingStep !== undefined) return false;
    const last = context.history.at(-1);
    if (last === undefined || last.role === 'assistant' || last.role === 'system') return false;
    try {
      await context.append({ role: 'assistant', content: [{ type: 'text', text }], partial: true });
      return true;
    } catch (error) {
      this.renderer.info(`could not record the interrupted reply in the session: ${describeFailure(error)}`);
      return false;
    }
  }

  /** Aborts the running turn (its tools included); returns whether one was running. */
  interrupt(): boolean {
    if (!this.running) return false;
    this.running.abort(new Error('Interrupted by the user'));
    return true;
  }

  /** Closes the session file, disposes the kernel, and closes the usage ledger (its records written). */
  async close(): Promise<void> {
    this.renderer.close();
    await this.agent.context.close();
    await this.kernel.dispose();
    await this.usageLedger?.close?.();
  }
}

/**
 * What to tell the user when the last step was cut off while its tools ran — by Ctrl-C, or by a
 * crash of the process that ran it — and so is completed first by the turn about to start, from the
 * call ledger (see `Agent.run`). `undefined` when there is no such step.
 */
function cutOffStep(context: AgentContext): string | undefined {
  const open = context.ledger?.openStep;
  if (open === undefined) return undefined;
  const cut = open.calls.filter((call) => call.started && call.result === undefined).length;
  if (cut === 0) return 'the last step was cut off before it was saved: completing it first, with the results its calls had';
  return (
    `the last step was cut off while ${cut === 1 ? '1 tool call' : `${cut} tool calls`} ran: completing it first ` +
    '(a call that may have run is not run again unless its tool only reads; the model is told)'
  );
}

/** Without a handler, calls that need approval are denied (never deferred: the CLI has no way to resume them). */
const denyAll: ApprovalCallback = () => ({ type: 'deny', reason: 'nobody can approve it in this session' });

export { describeFailure };
