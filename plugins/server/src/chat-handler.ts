import { randomUUID } from 'node:crypto';

import {
  ApprovalPendingError,
  ResumeConflictError,
  pendingApprovals,
  type Agent,
  type AgentContext,
  type AgentEvent,
  type AgentRunOptions,
  type AgentTurnResult,
  type ApprovalDecision,
  type Kernel,
  type KernelAgentOptions,
  type StepStartEvent,
} from '@kosong/core';
import { checkKnownOptions, UsagePricing, type KnownOptions } from '@kosong/core/kernel';

import { approvalIdOf } from './approval-id.js';
import { jsonError, refusalOf } from './error-responses.js';
import type { Authenticate } from './auth.js';
import { ChatRequestError, parseChatRequest, type ChatApprovalRequest } from './chat-request.js';
import { isValidChatId, memorySessions, type ChatSessions } from './sessions.js';
import type { SharedTurns, SharedTurnWriter } from './shared-turns.js';
import { TurnStream } from './turn-stream.js';
import { SSE_DONE, sseFrame, UiChunkWriter } from './ui-chunks.js';

/** The headers of a UI message stream response (those of the AI SDK's `createUIMessageStreamResponse`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

/** The largest request body by default: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** How much of a turn's stream is kept for resuming, by default: 4 MiB. */
export const DEFAULT_MAX_TURN_BUFFER_BYTES = 4 * 1024 * 1024;

/** How far a response may fall behind its turn before it is detached, by default: 1 MiB. */
export const DEFAULT_MAX_READER_LAG_BYTES = 1024 * 1024;

/** Options of {@link createChatHandler}. */
export interface ChatHandlerOptions {
  /** The kernel whose tenants' agents answer. */
  readonly kernel: Kernel;
  /** Who sends a request: the tenant it runs as (see `apiKeyAuth`). A request never picks its tenant itself. */
  readonly auth: Authenticate;
  /** Where the chats' conversations are kept (default: `memorySessions()`; `redisSessions(redis)` for several processes). */
  readonly sessions?: ChatSessions;
  /**
   * Where running turns are shared with other processes (`redisTurns(redis)`): a resume or a stop
   * that reaches another process than the one running the turn. Default: none (one process).
   */
  readonly turns?: SharedTurns;
  /**
   * The agent of every chat (`kernel.agent()`'s options but the tenant, which is the request's, and
   * the context, which is the chat's): its system prompt, provider, `maxSteps`, `timeouts`, …
   * Default: an empty system prompt.
   */
  readonly agent?: Omit<KernelAgentOptions, 'tenant' | 'context'>;
  /** The path of the chat route (default `/api/chat`); resuming is `<path>/<chat id>/stream`. */
  readonly path?: string;
  /** The largest request body, in bytes (default {@link DEFAULT_MAX_BODY_BYTES}); a larger one is a 413. */
  readonly maxBodyBytes?: number;
  /**
   * How many bytes of a turn's stream are kept so that it can be resumed from its start (default
   * {@link DEFAULT_MAX_TURN_BUFFER_BYTES}). A turn that streams more cannot be resumed any more
   * (a resume gets 204); the response that runs it goes on.
   */
  readonly maxTurnBufferBytes?: number;
  /**
   * How many bytes of its turn a response may have not read yet (default
   * {@link DEFAULT_MAX_READER_LAG_BYTES}): a client that reads slower is detached (its connection
   * closed); the turn goes on, and can be resumed.
   */
  readonly maxReaderLagBytes?: number;
  /**
   * The `errorText` of the `error` chunk of a turn that failed. Default: the error's message. Give
   * one that says less when errors may carry what a client should not see.
   */
  readonly errorText?: (error: unknown) => string;
  /**
   * Told of a request that failed on the server (a 500: an `authenticate` that threw, a session
   * that could not be opened, …), whose response says only that it failed. Default: one line on stderr.
   */
  readonly onError?: (error: unknown, request: Request) => void;
}

/**
 * The chat endpoint as a Web `Request` → `Response` function, for any server that speaks the Fetch
 * API (Fastify through `createServer`, Hono, Next.js route handlers, `Deno.serve`, …).
 */
export interface ChatHandler {
  (request: Request): Promise<Response>;
  /** Aborts every running turn (their streams end with an `abort` chunk), then closes the sessions. */
  close(): Promise<void>;
  /** Resolves when no turn runs (the turns running now have ended, their way). */
  idle(): Promise<void>;
}

/** A turn running in this process. */
interface RunningTurn {
  readonly stream: TurnStream;
  /** Aborts the turn (a stop, or the handler's close). */
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

/** What a turn starts with: `run` or `resume` of the chat's agent, with the turn's options. */
type TurnStart = (options: AgentRunOptions) => Promise<AgentTurnResult>;

/** A chat whose request is being looked at, before its turn runs (a place held in `turns`). */
const RESERVED = 'reserved';

/** Why a stopped turn's stream ends with `abort`. */
const STOPPED = 'Stopped by the client';
const SHUTTING_DOWN = 'The server is shutting down';

/**
 * The chat endpoint of the AI SDK's `useChat` (`DefaultChatTransport`), for the agents of a kernel:
 *
 * - `POST <path>`: a `useChat` request (`id`, `messages`, `trigger`, `messageId`): a new user
 *   message runs a turn of the authenticated tenant's agent on chat `id`; approval answers
 *   (`addToolApprovalResponse`) resume the step that waits for them (`agent.resume({ decisions })`).
 *   Streamed as the UI message stream v1 (server-sent events of `UIMessageChunk`s, then `data: [DONE]`).
 * - `GET <path>/<id>/stream`: the turn in flight of that chat, from its first chunk; 204 when none.
 * - `POST <path>/<id>/stop` or `DELETE <path>/<id>/stream`: stops the turn in flight (its stream
 *   ends with `abort`); 204, or 404 when none runs.
 *
 * Errors are JSON (`{ "error": { "code", "message" } }`): 401 without a known key, 400 for a body
 * that is not JSON or not a `useChat` request, a bad chat id, or an approval id no call waits for;
 * 404 for another path, a stop without a turn, approval answers to a chat where nothing waits; 405
 * for another method; 409 when the chat has a turn running or a step waiting for approval (a new
 * message), or another resume took the step; 413 for a body over `maxBodyBytes`; 429 (with
 * `Retry-After`) when the tenant's limits refuse the turn's first step; 500 (saying no more;
 * `onError` is told why) when the server failed; 503 once closed.
 *
 * The turn runs to its end whatever happens to the response: a client that goes away leaves it
 * running, its chunks resumable. Only a stop, or {@link ChatHandler.close}, aborts it.
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  checkHandlerOptions(options);
  const { kernel, auth } = options;
  const sessions = options.sessions ?? memorySessions();
  const shared = options.turns;
  const base = (options.path ?? '/api/chat').replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxTurnBufferBytes = options.maxTurnBufferBytes ?? DEFAULT_MAX_TURN_BUFFER_BYTES;
  const maxReaderLagBytes = options.maxReaderLagBytes ?? DEFAULT_MAX_READER_LAG_BYTES;
  const errorText = options.errorText ?? defaultErrorText;
  const onError = options.onError ?? ((error: unknown, request: Request) => console.error(`[kosong/server] ${request.method} ${new URL(request.url).pathname} failed: ${defaultErrorText(error)}`));
  const agentOptions = options.agent ?? { systemPrompt: '' };
  /** The chats of this process with a turn running (or a request being looked at), by tenant and chat id. */
  const turns = new Map<string, RunningTurn | typeof RESERVED>();
  const agents = new WeakMap<AgentContext, Agent>();
  const running = new Set<Promise<void>>();
  /** The signals of the turns running, which `close()` aborts. */
  const controllers = new Set<AbortController>();
  const closing = new AbortController();
  /** The kernel's prices (those of its usage ledger), for the cost of each step. */
  const pricing = kernel.container.isBound(UsagePricing) ? kernel.container.get<UsagePricing>(UsagePricing) : undefined;

  const agentOf = (tenant: string, context: AgentContext): Agent => {
    let agent = agents.get(context);
    if (agent === undefined) {
      agent = kernel.agent({ ...agentOptions, tenant, context });
      agents.set(context, agent);
    }
    return agent;
  };

  const stopLocal = async (key: string): Promise<boolean> => {
    const turn = turns.get(key);
    if (turn === undefined || turn === RESERVED) return false;
    turn.controller.abort(new Error(STOPPED));
    await turn.done;
    return true;
  };
  shared?.onStop((tenant, chatId) => void stopLocal(chatKey(tenant, chatId)));

  /**
   * Runs a turn; resolves with its response once its first step has begun (admitted by the
   * tenant's limits, the context claimed) or it ended: a turn refused before that gets a 409 or a
   * 429 instead of a stream.
   */
  const startTurn = async (tenant: string, chatId: string, context: AgentContext, start: TurnStart, continuation?: { readonly messageId: string; readonly denied: readonly string[] }): Promise<Response> => {
    const key = chatKey(tenant, chatId);
    const controller = new AbortController();
    controllers.add(controller); // aborted by close(): no listener per turn on one shared signal
    if (closing.signal.aborted) controller.abort(new Error(SHUTTING_DOWN)); // close() began while this request was read
    const stream = new TurnStream(maxTurnBufferBytes, maxReaderLagBytes);
    // The turn goes to the shared store only once it holds the chat (its first step began): a turn
    // refused because another process runs the chat's turn must not touch that turn's stream.
    let mirror: SharedTurnWriter | undefined;
    let unmirrored: string[] | undefined = shared === undefined ? undefined : [];
    const write = (frame: string): void => {
      stream.write(frame);
      if (!stream.replayable) {
        mirror?.drop();
        mirror = undefined;
        unmirrored = undefined;
      } else if (mirror !== undefined) mirror.write(frame);
      else unmirrored?.push(frame);
    };
    const response = stream.reader();
    const writer = new UiChunkWriter((chunk) => write(sseFrame(chunk)), continuation, errorText, pricing);
    writer.start(continuation?.messageId ?? randomUUID());
    let committed = false;
    let resolveBegun!: () => void;
    const begun = new Promise<void>((resolve) => (resolveBegun = resolve));
    const commit = (): void => {
      if (committed) return;
      committed = true;
      if (shared !== undefined && unmirrored !== undefined) {
        mirror = shared.begin(tenant, chatId);
        for (const frame of unmirrored) mirror.write(frame);
      }
      unmirrored = undefined;
      resolveBegun();
    };
    let refusal: Response | undefined;
    const onEvent = (event: AgentEvent): void => {
      if (event.type !== 'step_start') commit();
      writer.event(event);
    };
    const stepStarted = (event: StepStartEvent): void => {
      commit();
      writer.stepModel(event.provider, event.model);
    };
    const done = (async () => {
      try {
        const result = await start({ signal: controller.signal, onEvent, hooks: [{ name: 'kosong/server', hooks: { onStepStart: stepStarted } }] });
        if (result.stopReason === 'approval_required') writer.approvalRequests(result.pendingApprovals ?? [], context.pendingStep?.usage);
        writer.finish(result);
      } catch (error) {
        refusal = committed ? undefined : refusalOf(error);
        if (refusal === undefined && controller.signal.aborted) writer.abort(abortReason(controller.signal));
        else writer.error(errorText(error));
      } finally {
        controllers.delete(controller);
        write(SSE_DONE);
        stream.end();
        mirror?.end();
        const current = turns.get(key);
        if (current !== undefined && current !== RESERVED && current.stream === stream) turns.delete(key);
      }
    })();
    const turn: RunningTurn = { stream, controller, done };
    turns.set(key, turn);
    running.add(done);
    void done.finally(() => running.delete(done));
    await Promise.race([begun, done]);
    if (refusal !== undefined) {
      await response.cancel();
      return refusal;
    }
    return new Response(response, { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  };

  /** The turn of an approval answer: the pending step resumed with the decisions; or why not. */
  const resumeTurn = (tenant: string, chatId: string, context: AgentContext, request: ChatApprovalRequest): Promise<Response> | Response => {
    const pending = context.pendingStep;
    if (pending === undefined) return jsonError(404, 'no_pending_approval', 'No call waits for approval in this chat');
    const waiting = new Map(pendingApprovals(pending).map((call) => [approvalIdOf(call), call]));
    const decisions: Record<string, ApprovalDecision> = {};
    const denied: string[] = [];
    for (const response of request.responses) {
      const call = waiting.get(response.approvalId);
      if (call === undefined) return jsonError(400, 'unknown_approval', `No call waits for the approval ${JSON.stringify(response.approvalId)} in this chat`);
      decisions[call.toolCall.id] = response.approved ? { type: 'approve' } : { type: 'deny', ...(response.reason === undefined ? {} : { reason: response.reason }) };
      if (!response.approved) denied.push(call.toolCall.id);
    }
    const agent = agentOf(tenant, context);
    return startTurn(tenant, chatId, context, (options) => agent.resume({ ...options, decisions }), { messageId: request.messageId, denied });
  };

  const post = async (request: Request, tenant: string): Promise<Response> => {
    const text = await readBody(request, maxBodyBytes);
    if (text === TOO_LARGE) return jsonError(413, 'body_too_large', `The request body is larger than ${maxBodyBytes} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return jsonError(400, 'malformed_json', `The request body is not JSON: ${(error as Error).message}`);
    }
    let chatRequest;
    try {
      chatRequest = parseChatRequest(body);
    } catch (error) {
      if (error instanceof ChatRequestError) return jsonError(400, 'bad_request', `The request body is not a useChat request: ${error.message}`);
      throw error;
    }
    const { chatId } = chatRequest;
    const key = chatKey(tenant, chatId);
    if (turns.has(key)) {
      return chatRequest.kind === 'approval'
        ? jsonError(409, 'resume_conflict', new ResumeConflictError().message)
        : jsonError(409, 'turn_running', 'This chat has a turn running: resume it (GET …/stream) or wait for its end');
    }
    turns.set(key, RESERVED); // no other request of this chat gets past here until this one's turn is set (or it is refused)
    try {
      const context = await sessions.open(tenant, chatId);
      if (chatRequest.kind === 'approval') return await resumeTurn(tenant, chatId, context, chatRequest);
      const pending = context.pendingStep;
      if (pending !== undefined) return jsonError(409, 'approval_pending', new ApprovalPendingError(pendingApprovals(pending)).message.replace(/; resume it with .*$/, ': answer them first (addToolApprovalResponse)'));
      const agent = agentOf(tenant, context);
      const message = chatRequest.message;
      return await startTurn(tenant, chatId, context, (options) => agent.run(message, options));
    } finally {
      if (turns.get(key) === RESERVED) turns.delete(key);
    }
  };

  const resume = async (tenant: string, chatId: string): Promise<Response> => {
    const turn = turns.get(chatKey(tenant, chatId));
    if (turn !== undefined && turn !== RESERVED) {
      if (turn.stream.done || !turn.stream.replayable) return new Response(null, { status: 204 });
      return new Response(turn.stream.reader(), { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
    }
    const elsewhere = await shared?.resume(tenant, chatId);
    if (elsewhere === undefined) return new Response(null, { status: 204 });
    return new Response(elsewhere, { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  };

  const stop = async (tenant: string, chatId: string): Promise<Response> => {
    if ((await stopLocal(chatKey(tenant, chatId))) || (await shared?.stop(tenant, chatId)) === true) return new Response(null, { status: 204 });
    return jsonError(404, 'no_turn', 'This chat has no turn running');
  };

  const handle = async (request: Request): Promise<Response> => {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return jsonError(400, 'bad_url', 'The request URL cannot be read');
    }
    const route = routeOf(pathname, base);
    if (route === undefined) return jsonError(404, 'not_found', `No route ${pathname}: POST ${base}, GET or DELETE ${base}/<chat id>/stream, POST ${base}/<chat id>/stop`);
    const methods = ROUTE_METHODS[route.kind];
    if (!methods.includes(request.method)) return jsonError(405, 'method_not_allowed', `${pathname} takes ${methods.join(' or ')}, not ${request.method}`, { allow: methods.join(', ') });
    if (closing.signal.aborted) return jsonError(503, 'closed', SHUTTING_DOWN);
    try {
      const tenant = await auth(request);
      if (typeof tenant !== 'string' || tenant === '') return jsonError(401, 'unauthorized', 'A valid API key is required (Authorization: Bearer <key>)', { 'www-authenticate': 'Bearer' });
      if (route.kind === 'chat') return await post(request, tenant);
      if (!isValidChatId(route.chatId)) return jsonError(400, 'bad_chat_id', 'The chat id must be 1 to 128 letters, digits, "_", "-" or "." (not first)');
      if (route.kind === 'stop' || request.method === 'DELETE') return await stop(tenant, route.chatId);
      return await resume(tenant, route.chatId);
    } catch (error) {
      try {
        onError(error, request);
      } catch {
        // a report; the response is the same
      }
      return jsonError(500, 'internal', 'The request failed on the server');
    }
  };

  const idle = async (): Promise<void> => {
    while (running.size > 0) await Promise.all([...running]);
  };

  return Object.assign(handle, {
    idle,
    async close(): Promise<void> {
      closing.abort(new Error('The chat handler was closed'));
      for (const controller of controllers) controller.abort(new Error(SHUTTING_DOWN));
      await idle();
      await sessions.close();
      await shared?.close();
    },
  });
}

/** The key of a chat in this process: its tenant and its id. */
function chatKey(tenant: string, chatId: string): string {
  return `${tenant}\u0000${chatId}`;
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && (reason.message === STOPPED || reason.message === SHUTTING_DOWN) ? reason.message : SHUTTING_DOWN;
}

type Route = { readonly kind: 'chat' } | { readonly kind: 'stream' | 'stop'; readonly chatId: string };

/** The methods of each route. */
const ROUTE_METHODS: Readonly<Record<Route['kind'], readonly string[]>> = { chat: ['POST'], stream: ['GET', 'DELETE'], stop: ['POST'] };

/** The route of a path: the chat route, a chat's stream or stop (its id decoded), or none. */
function routeOf(pathname: string, base: string): Route | undefined {
  if (pathname === base || pathname === `${base}/`) return { kind: 'chat' };
  if (!pathname.startsWith(`${base}/`)) return undefined;
  const rest = pathname.slice(base.length + 1);
  const match = /^([^/]+)\/(stream|stop)\/?$/.exec(rest);
  if (!match) return undefined;
  let chatId: string;
  try {
    chatId = decodeURIComponent(match[1]!);
  } catch {
    chatId = match[1]!; // not a valid chat id: refused as such
  }
  return { kind: match[2] === 'stop' ? 'stop' : 'stream', chatId };
}

const TOO_LARGE = Symbol('too large');

/** The body as text, or {@link TOO_LARGE} as soon as it passes `limit` bytes (the rest is not read). */
async function readBody(request: Request, limit: number): Promise<string | typeof TOO_LARGE> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => undefined);
    return TOO_LARGE;
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function defaultErrorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const HANDLER_OPTIONS: KnownOptions<ChatHandlerOptions> = {
  kernel: true,
  auth: true,
  sessions: true,
  turns: true,
  agent: true,
  path: true,
  maxBodyBytes: true,
  maxTurnBufferBytes: true,
  maxReaderLagBytes: true,
  errorText: true,
  onError: true,
};

/** Refuses what the handler would not honour: an unknown option, no auth, a size that is no positive integer. */
function checkHandlerOptions(options: ChatHandlerOptions): void {
  checkKnownOptions('createChatHandler', options, HANDLER_OPTIONS);
  if (typeof options.auth !== 'function') throw new TypeError('createChatHandler: auth must be a function (apiKeyAuth(...) or your own authenticate)');
  for (const name of ['maxBodyBytes', 'maxTurnBufferBytes', 'maxReaderLagBytes'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new TypeError(`createChatHandler: ${name} must be a positive integer of bytes, got ${String(value)}`);
  }
}
