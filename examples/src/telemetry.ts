import { Kernel, createMessage, definePlugin } from '@kosong/core';
import { loggingPlugin } from '@kosong/plugin-logging';
import { otelPlugin } from '@kosong/plugin-otel';
import { EchoChatProvider } from '@kosong/provider-echo';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const spans = new InMemorySpanExporter(); // in a real program: your OTLP exporter
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

const kernel = new Kernel();
await kernel.use(
  // An offline model (the echo provider); for a real one, e.g. openAIPlugin() from @kosong/provider-openai.
  definePlugin({ name: 'model', setup: (ctx) => ctx.bindChatProvider('echo', new EchoChatProvider(), { default: true }) }),
  otelPlugin({ tracerProvider }), // @kosong/plugin-otel; metrics go to the global meter provider
  loggingPlugin({ secrets: [process.env.OPENAI_API_KEY ?? ''] }), // @kosong/plugin-logging: JSON lines on stdout
);
await kernel.runner().step({ systemPrompt: '', history: [createMessage('user', 'text: Hello!')] });
await kernel.dispose();
console.log(spans.getFinishedSpans().map((span) => span.name)); // [ 'chat echo' ]
