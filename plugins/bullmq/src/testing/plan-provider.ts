import {
  textPart,
  toolCall,
  type ChatProvider,
  type GenerationOptions,
  type Message,
  type StreamedMessage,
  type StreamedMessagePart,
  type TokenUsage,
  type Tool,
} from '@kosong/core';
import { noGenerationOptions, type ProviderGenerateOptions } from '@kosong/core/provider-kit';

/** One tool call of a plan. */
export interface PlannedCall {
  readonly tool: string;
  readonly args?: Record<string, unknown>;
}

/** What a turn's model does, written into the turn's input with {@link planInput}. */
export interface Plan {
  /** Label of the turn (in every text part and call id). */
  readonly label: string;
  /** The tool calls of each step before the last; the last step answers with text. */
  readonly steps: readonly (readonly PlannedCall[])[];
  /** Text parts streamed before the calls of each step, and of the answer (default 1). */
  readonly parts?: number;
  /** Delay before each streamed part (ms; default none). */
  readonly partDelayMs?: number;
}

/** The input of a turn that follows `plan`. */
export const planInput = (plan: Plan): string => `plan ${JSON.stringify(plan)}`;

/** Usage reported by every step of a {@link PlanProvider}. */
export const PLAN_STEP_USAGE: TokenUsage = { inputOther: 10, output: 2, inputCacheRead: 0, inputCacheCreation: 0 };

/**
 * A model for tests and benchmarks of fleets, driven by the history only, so that any worker can
 * take a turn over at any step: it reads the plan from the last user message ({@link planInput}) and
 * plays the step after those already in the history. Honours the abort signal.
 */
export class PlanProvider implements ChatProvider {
  readonly name = 'plan';
  readonly modelName = 'plan-model';
  readonly thinkingEffort = undefined;
  readonly generation: GenerationOptions = noGenerationOptions();

  generate(_systemPrompt: string, _tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    options.signal?.throwIfAborted();
    const lastUser = history.findLastIndex((m) => m.role === 'user');
    const first = history[lastUser]?.content[0];
    const plan: Plan = first?.type === 'text' && first.text.startsWith('plan ') ? (JSON.parse(first.text.slice(5)) as Plan) : { label: 'unplanned', steps: [] };
    const done = history.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
    const parts: StreamedMessagePart[] = [];
    for (let i = 0; i < (plan.parts ?? 1); i++) parts.push(textPart(`${plan.label} step ${done + 1} part ${i + 1}. `));
    const calls = plan.steps[done];
    if (calls) calls.forEach((c, i) => parts.push(toolCall(`${plan.label}-s${done + 1}-c${i + 1}`, c.tool, JSON.stringify(c.args ?? {}))));
    else parts.push(textPart(`${plan.label} done.`));
    const { signal } = options;
    const delayMs = plan.partDelayMs;
    return Promise.resolve({
      id: `${plan.label}-${done + 1}`,
      usage: PLAN_STEP_USAGE,
      finishReason: calls ? 'tool_calls' : 'stop',
      async *[Symbol.asyncIterator]() {
        for (const part of parts) {
          if (delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, delayMs));
          signal?.throwIfAborted();
          yield part;
        }
      },
    });
  }

  withThinking(): ChatProvider {
    return this;
  }

  withGeneration(): ChatProvider {
    return this;
  }
}
