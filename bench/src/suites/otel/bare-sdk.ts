/**
 * The OpenTelemetry SDK's own cost, without the plugin: a step through `kernel.runner().step()` (no
 * hooks) with the same three spans the plugin makes for it, made by hand around the step, the way an
 * application without `@kosong/plugin-otel` would: a `chat {model}` span (CLIENT) with the same start
 * attributes, open while the step runs and its tools settle, with the response attributes set at its
 * end; an `execute_tool {tool}` span (INTERNAL, a child of it) per tool call with the same attributes,
 * active while the tool runs. What the plugin adds on top of this is the plugin's (and its hooks')
 * cost; this is the floor a telemetry plugin cannot go under.
 *
 * @module
 */
import { definePlugin, inputTokens, Kernel, type Toolset } from '@kosong/core';
import { context, ROOT_CONTEXT, SpanKind, trace, type Context, type Tracer } from '@opentelemetry/api';
import type { PreparedVariant } from '../../harness.js';
import { repeated } from '../../repeated.js';
import { prepareStep } from '../step/kosong.js';
import type { ResponseShape } from '../step/workload.js';
import { tracedProvider } from './traced-provider.js';

/** The step's span context and the position of its next tool call, while a step runs. */
interface OpenStep {
  readonly context: Context;
  nextIndex: number;
}

/**
 * `steps` steps of `shape` through a kernel runner with no hooks, each traced by hand with the SDK
 * (see the module notes); checks that each step ended its spans.
 */
export async function prepareBareSdk(label: string, shape: ResponseShape, steps: number): Promise<PreparedVariant> {
  const { tracerProvider, counter } = tracedProvider();
  const tracer: Tracer = tracerProvider.getTracer('bench-bare-sdk');
  const kernel = new Kernel();
  let open: OpenStep | undefined;
  const ready: Promise<void>[] = [];
  const prepared = prepareStep(
    label,
    (provider, toolset) => {
      const traced: Toolset = {
        tools: toolset.tools,
        handle(call, toolContext) {
          const step = open!;
          const index = step.nextIndex++;
          const name = call.function.name;
          const span = tracer.startSpan(
            `execute_tool ${name}`,
            {
              kind: SpanKind.INTERNAL,
              attributes: {
                'gen_ai.operation.name': 'execute_tool',
                'gen_ai.tool.name': name,
                'gen_ai.tool.call.id': call.id,
                'gen_ai.tool.type': 'function',
                'kosong.tool.call.index': index,
              },
            },
            step.context,
          );
          const settled = context.with(trace.setSpan(step.context, span), () => toolset.handle(call, toolContext));
          return Promise.resolve(settled).finally(() => span.end());
        },
      };
      ready.push(
        kernel.use(
          definePlugin({
            name: 'bench',
            setup(ctx) {
              ctx.bindChatProvider('mock', provider);
              ctx.bindToolset(traced);
            },
          }),
        ),
      );
      const runner = kernel.runner();
      const { name: providerName, modelName } = provider;
      return async () => {
        // The step id is the runner's own; the span gets one of the same shape before the step starts.
        const span = tracer.startSpan(
          `chat ${modelName}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': providerName,
              'gen_ai.request.model': modelName,
              'kosong.step.id': `bench-${++stepCount}`,
            },
          },
          context.active(),
        );
        open = { context: trace.setSpan(ROOT_CONTEXT, span), nextIndex: 0 };
        const result = await context.with(open.context, () => runner.step({ systemPrompt: 'You are a benchmark.', history: [] }));
        await result.toolResults();
        if (result.id !== undefined) span.setAttribute('gen_ai.response.id', result.id);
        if (result.finishReason !== undefined) span.setAttribute('gen_ai.response.finish_reasons', [result.finishReason === 'tool_calls' ? 'tool_call' : result.finishReason]);
        const usage = result.usage;
        if (usage) {
          span.setAttributes({
            'gen_ai.usage.input_tokens': inputTokens(usage),
            'gen_ai.usage.output_tokens': usage.output,
            'gen_ai.usage.cache_read.input_tokens': usage.inputCacheRead,
            'gen_ai.usage.cache_creation.input_tokens': usage.inputCacheCreation,
          });
        }
        span.end();
        return result;
      };
    },
    shape,
  );
  let stepCount = 0;
  await Promise.all(ready);
  const runs = repeated(prepared, steps);
  const spans = steps * (1 + shape.toolCalls);
  return {
    async run() {
      counter.ended = 0;
      return runs.run();
    },
    verify(outputs: unknown[]) {
      runs.verify(outputs as never);
      if (counter.ended !== spans) throw new Error(`${label}: ${counter.ended} spans ended, expected ${spans}`);
    },
  };
}
