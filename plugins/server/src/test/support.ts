import { AbstractChat, DefaultChatTransport, uiMessageChunkSchema, type ChatInit, type ChatState, type ChatStatus, type UIMessage, type UIMessageChunk } from 'ai';
import { expect } from 'chai';

import { appendFile, readFile } from 'node:fs/promises';

import { Kernel, toolError, toolOk, type ChatProvider, type KernelOptions, type Toolset } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import type { FastifyInstance } from 'fastify';

import { apiKeyAuth, hashApiKey } from '../auth.js';
import type { ChatSessions } from '../sessions.js';
import { createServer, type ServerOptions } from '../server.js';

/** The API keys of the tests' two tenants. */
export const KEYS = { acme: 'sk-acme-0123456789', globex: 'sk-globex-9876543210' } as const;

/** A small local toolset: `add` adds two numbers, `fail` throws, `wait` waits for `ms` (or its signal). */
export function localToolset(log: string[] = []): Toolset {
  return {
    tools: [
      { name: 'add', description: 'Adds a and b.', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
      { name: 'fail', description: 'Always fails.', parameters: { type: 'object', properties: {} } },
      { name: 'wait', description: 'Waits.', parameters: { type: 'object', properties: { ms: { type: 'number' } } } },
    ],
    async handle(call, { signal }) {
      log.push(call.function.name);
      const args = JSON.parse(call.function.arguments ?? '{}') as Record<string, number>;
      if (call.function.name === 'add') return { toolCallId: call.id, returnValue: toolOk({ output: String(args.a! + args.b!) }) };
      if (call.function.name === 'wait') {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, args.ms ?? 0);
          signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
        });
        return { toolCallId: call.id, returnValue: toolOk({ output: 'waited' }) };
      }
      if (call.function.name === 'fail') throw new Error('the fail tool failed, as it always does');
      return { toolCallId: call.id, returnValue: toolError({ message: `no tool ${call.function.name}`, brief: 'not found' }) };
    },
  };
}

/**
 * A tool whose runs are counted by its own marker: each run of `mark` appends its call id as a line
 * to `file`, then takes `delayMs` more before it returns.
 */
export function markerToolset(file: string, delayMs = 0): Toolset {
  return {
    tools: [{ name: 'mark', description: 'Appends a line to the marker file.', parameters: { type: 'object', properties: { note: { type: 'string' } } } }],
    async handle(call) {
      await appendFile(file, `${call.id}\n`);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { toolCallId: call.id, returnValue: toolOk({ output: 'marked' }) };
    },
  };
}

/** The lines of a marker file (none when it does not exist). */
export async function markerLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

/** The echo model under another model name (`echo/echo-unpriced`), which no price table or catalog knows. */
export class UnpricedEchoChatProvider extends EchoChatProvider {
  // The echo provider declares its model name as the literal 'echo'; this one is another model.
  override readonly modelName = 'echo-unpriced' as string as 'echo';
}

/** A server listening on 127.0.0.1, port 0. */
export interface TestServer {
  readonly app: FastifyInstance;
  readonly kernel: Kernel;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

/** What {@link startServer} takes besides the server's options: the kernel's options, other toolsets. */
export interface TestServerSetup {
  /** The kernel's options (its `prices`, …). */
  readonly kernelOptions?: KernelOptions;
  /** A tenant's toolset instead of the local toolset. */
  readonly toolsets?: { readonly acme?: Toolset; readonly globex?: Toolset };
}

/** Starts a server whose tenants `acme` and `globex` have the given providers and the local toolset, keyed by {@link KEYS}. */
export async function startServer(
  providers: { acme: ChatProvider; globex: ChatProvider },
  { kernelOptions, toolsets, ...options }: Partial<ServerOptions> & { sessions?: ChatSessions } & TestServerSetup = {},
): Promise<TestServer> {
  const kernel = new Kernel(kernelOptions);
  kernel.tenants.define('acme', { provider: providers.acme, toolset: toolsets?.acme ?? localToolset() });
  kernel.tenants.define('globex', { provider: providers.globex, toolset: toolsets?.globex ?? localToolset() });
  const auth = apiKeyAuth([
    { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
    { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
  ]);
  const app = createServer({ kernel, auth, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    app,
    kernel,
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      await app.close();
      await kernel.dispose();
    },
  };
}

/** The AI SDK's own transport, on a test server, with a tenant's key. */
export function transport(server: TestServer, key: string | undefined): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({ api: `${server.url}/api/chat`, ...(key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } }) });
}

/** The AI SDK's own transport, which also keeps every chunk it hands to the client (as the AI SDK parsed it), in order. */
export class RecordingTransport extends DefaultChatTransport<UIMessage> {
  readonly chunks: UIMessageChunk[] = [];

  override async sendMessages(options: Parameters<DefaultChatTransport<UIMessage>['sendMessages']>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const stream = await super.sendMessages(options);
    return stream.pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        transform: (chunk, controller) => {
          this.chunks.push(chunk);
          controller.enqueue(chunk);
        },
      }),
    );
  }
}

/** A {@link RecordingTransport} on a test server, with a tenant's key. */
export function recordingTransport(server: TestServer, key: string): RecordingTransport {
  return new RecordingTransport({ api: `${server.url}/api/chat`, headers: { authorization: `Bearer ${key}` } });
}

/** A `ChatState` in plain arrays: what `AbstractChat` needs to run in Node without React. */
class ArrayChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => void (this.messages = [...this.messages, message]);
  popMessage = (): void => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage): void => void (this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)]);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's `Chat` (its `AbstractChat`, as `@ai-sdk/react` extends it) in Node. */
export class NodeChat extends AbstractChat<UIMessage> {
  constructor(options: { id: string; transport: DefaultChatTransport<UIMessage>; onError?: (error: Error) => void; sendAutomaticallyWhen?: NonNullable<ChatInit<UIMessage>['sendAutomaticallyWhen']> }) {
    super({ ...options, state: new ArrayChatState() });
  }
}

/** Resolves once `condition()` holds (checked every 10 ms); rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A POST to a test server with a raw body. */
export function post(server: TestServer, body: string, key: string | null = KEYS.acme, path = '/api/chat'): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body,
  });
}

/** A `useChat` request body with one user message. */
export function chatBody(id: string, text: string): string {
  return JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] });
}

/** The `data:` payloads of an SSE body, parsed (`[DONE]` kept as the string). */
export function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as unknown)));
}

/** Checks each chunk (the `[DONE]` string aside) against the AI SDK's own `uiMessageChunkSchema`: no type or field it does not know. */
export async function expectKnownChunks(chunks: readonly unknown[]): Promise<void> {
  const schema = uiMessageChunkSchema();
  for (const chunk of chunks) {
    if (chunk === '[DONE]') continue;
    const result = await schema.validate!(chunk);
    expect(result.success, `${JSON.stringify(chunk)} is a UIMessageChunk`).to.equal(true);
  }
}
