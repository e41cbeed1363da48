/**
 * The OpenTelemetry plugin's spans as the active context, with the real SDK: an undici (fetch)
 * instrumentation, the AsyncLocalStorage context manager, an in-memory exporter, and real HTTP to
 * local servers. An HTTP call made by a tool nests under its `execute_tool` span; the provider's own
 * request nests under the step's `chat` span; an agent turn's `invoke_agent` span parents its steps.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, Kernel, definePlugin, step, textPart, toolOk, type Message, type ToolCall, type ToolContext, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { OpenAIChatProvider } from '@kosong/provider-openai';
import { ChatCompletionsServer, completionChunk, textReply, toolCallChunk } from '@kosong/provider-openai/testing';
import { OtelStepHooks, otelPlugin } from '@kosong/plugin-otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];

/** A local HTTP server a tool calls (`GET /lookup?call=<id>`). */
async function startLookupServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    setTimeout(() => response.end(`looked up ${request.url ?? ''}`), 2);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A toolset whose one tool fetches the lookup server, naming its call in the query. */
function fetchingToolset(baseUrl: string): Toolset {
  return {
    tools: [{ name: 'lookup', description: 'Looks something up over HTTP.', parameters: { type: 'object' } }],
    async handle(call: ToolCall, { signal }: ToolContext) {
      await new Promise((resolve) => setTimeout(resolve, 1)); // the context must survive an await
      const response = await fetch(`${baseUrl}/lookup?call=${encodeURIComponent(call.id)}`, { signal });
      return { toolCallId: call.id, returnValue: toolOk({ output: await response.text() }) };
    },
  };
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
const isHttp = (span: ReadableSpan): boolean => span.name === 'GET' || span.name === 'POST';
/** The URL an undici client span was made for. */
const urlOf = (span: ReadableSpan): string => String(span.attributes['url.full'] ?? '');

describe('OpenTelemetry: the plugin’s spans are the active context (real SDK, undici instrumentation)', function () {
  this.timeout(20_000);
  let contextManager: AsyncLocalStorageContextManager;
  let exporter: InMemorySpanExporter;
  let tracerProvider: BasicTracerProvider;
  let instrumentation: UndiciInstrumentation;
  let lookup: { server: Server; url: string };

  before(async () => {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    lookup = await startLookupServer();
  });
  after(async () => {
    context.disable(); // the global context manager, registered only for this suite
    await new Promise<void>((resolve) => lookup.server.close(() => resolve()));
  });
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    // Enabled when created (a config of `enabled: false` would make it ignore every request).
    instrumentation = new UndiciInstrumentation();
    instrumentation.setTracerProvider(tracerProvider);
  });
  afterEach(async () => {
    instrumentation.disable();
    await tracerProvider.shutdown();
  });

  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  const named = (prefix: string): ReadableSpan[] => spans().filter((s) => s.name.startsWith(prefix));

  it("a tool's HTTP call is a child of its execute_tool span, which is a child of the step's chat span", async () => {
    const hooks = new OtelStepHooks({ tracerProvider });
    const provider = new MockChatProvider([textPart('looking'), { type: 'function', id: 'c1', function: { name: 'lookup', arguments: '{}' } }]);
    const result = await step({ provider, systemPrompt: '', toolset: fetchingToolset(lookup.url), history, hooks: [{ name: 'otel', hooks }] });
    const [toolResult] = await result.toolResults();
    expect(toolResult!.returnValue.output).to.equal('looked up /lookup?call=c1');

    const [chat] = named('chat');
    const [tool] = named('execute_tool');
    const [http] = spans().filter(isHttp);
    expect(chat && tool && http, spans().map((s) => s.name).join(', ')).to.not.equal(undefined);
    expect(parentOf(tool!)).to.equal(idOf(chat!));
    expect(parentOf(http!)).to.equal(idOf(tool!));
    expect(http!.spanContext().traceId).to.equal(chat!.spanContext().traceId);
  });

  it("the provider's own HTTP request (OpenAI SDK over fetch) is a child of the chat span", async () => {
    const server = await ChatCompletionsServer.start();
    try {
      server.reply(textReply(['Hello']));
      const provider = new OpenAIChatProvider({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'gpt-test' });
      const result = await step({ provider, systemPrompt: '', toolset: fetchingToolset(lookup.url), history, hooks: [{ name: 'otel', hooks: new OtelStepHooks({ tracerProvider }) }] });
      await result.toolResults();
      const [chat] = named('chat gpt-test');
      const [post] = spans().filter((s) => s.name === 'POST');
      expect(post, spans().map((s) => s.name).join(', ')).to.not.equal(undefined);
      expect(urlOf(post!)).to.contain('/v1/chat/completions');
      expect(parentOf(post!)).to.equal(idOf(chat!));
    } finally {
      await server.close();
    }
  });

  it('50 concurrent steps with 3 calls each: every HTTP span is a child of its own call’s span', async () => {
    const hooks = new OtelStepHooks({ tracerProvider });
    const runs = Array.from({ length: 50 }, async (_, s) => {
      const calls = [0, 1, 2].map((c) => ({ type: 'function' as const, id: `s${s}c${c}`, function: { name: 'lookup', arguments: '{}' } }));
      const result = await step({ provider: new MockChatProvider(calls, { delayMs: s % 3 }), systemPrompt: '', toolset: fetchingToolset(lookup.url), history, hooks: [{ name: 'otel', hooks }] });
      return result.toolResults();
    });
    await Promise.all(runs);
    const tools = new Map(named('execute_tool').map((span) => [String(span.attributes['gen_ai.tool.call.id']), span]));
    const https = spans().filter(isHttp);
    expect(https.length).to.equal(150);
    for (const http of https) {
      const callId = decodeURIComponent(/call=([^&]+)/.exec(urlOf(http))![1]!);
      expect(parentOf(http), callId).to.equal(idOf(tools.get(callId)!));
    }
  });

  it('an agent turn gets an invoke_agent span parenting its steps; kernel.agent() names provider, model and tenant', async () => {
    const server = await ChatCompletionsServer.start();
    const kernel = new Kernel();
    try {
      server.reply(
        {
          type: 'stream',
          chunks: [
            toolCallChunk({ index: 0, id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }),
            completionChunk({ delta: {}, finishReason: 'tool_calls' }),
          ],
        },
        textReply(['Done.']),
      );
      await kernel.use(
        definePlugin({
          name: 'models',
          setup(ctx) {
            ctx.bindChatProvider('openai', new OpenAIChatProvider({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'gpt-test' }), { default: true });
            ctx.bindToolset(fetchingToolset(lookup.url));
          },
        }),
        otelPlugin({ tracerProvider }),
      );
      kernel.tenants.define('acme', {});
      const turn = await kernel.agent({ tenant: 'acme', systemPrompt: '', name: 'support' }).run('hi');
      expect(turn.steps, JSON.stringify(turn.message)).to.equal(2);

      const [agentSpan] = named('invoke_agent');
      expect(agentSpan!.name).to.equal('invoke_agent support');
      expect(agentSpan!.attributes).to.include({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'kosong.tenant.id': 'acme',
        'kosong.turn.steps': 2,
        'kosong.turn.stop_reason': 'no_tool_calls',
      });
      const chats = named('chat');
      expect(chats.length).to.equal(2);
      for (const chat of chats) expect(parentOf(chat)).to.equal(idOf(agentSpan!));
      const [tool] = named('execute_tool');
      const http = spans().filter(isHttp);
      expect(http.length).to.equal(3); // two model requests, one lookup
      for (const request of http) {
        const parent = urlOf(request).includes('/lookup') ? idOf(tool!) : undefined;
        if (parent) expect(parentOf(request)).to.equal(parent);
        else expect(chats.map(idOf)).to.include(parentOf(request));
      }
    } finally {
      await kernel.dispose();
      await server.close();
    }
  });

  it('a failed turn ends its invoke_agent span as an error; a span active before the turn is its parent', async () => {
    const tracer = tracerProvider.getTracer('test');
    const hooks = new OtelStepHooks({ tracerProvider });
    const agent = new Agent({
      systemPrompt: '',
      retry: { maxAttempts: 1 },
      step: () => Promise.reject(new TypeError('broken step')),
    });
    const outer = tracer.startSpan('request handler');
    const caught = await context.with(trace.setSpan(context.active(), outer), () => agent.run('hi', { hooks: [{ name: 'otel', hooks }] })).catch((e: unknown) => e);
    outer.end();
    expect(caught).to.be.instanceOf(TypeError);
    const [agentSpan] = named('invoke_agent');
    expect(agentSpan!.status.code).to.equal(2); // ERROR
    expect(agentSpan!.attributes['error.type']).to.equal('TypeError');
    expect(parentOf(agentSpan!)).to.equal(outer.spanContext().spanId);
    expect(hooks.openSteps).to.equal(0);
  });
});
