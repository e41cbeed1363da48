/**
 * `@kosong/server`: the AI SDK's UI message stream (what `useChat` speaks) over HTTP, for the agents
 * of a kosong kernel, per tenant. {@link createChatHandler} is the endpoint as a Web `Request` →
 * `Response` function; {@link createServer} mounts it on Fastify 5.
 *
 * @module
 */
export { apiKeyAuth, hashApiKey, presentedApiKey, type ApiKeyEntry, type Authenticate } from './auth.js';
export { approvalIdOf } from './approval-id.js';
export {
  createChatHandler,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_READER_LAG_BYTES,
  DEFAULT_MAX_TURN_BUFFER_BYTES,
  UI_MESSAGE_STREAM_HEADERS,
  type ChatHandler,
  type ChatHandlerOptions,
} from './chat-handler.js';
export { ChatRequestError, parseChatRequest, type ApprovalResponse, type ChatApprovalRequest, type ChatMessageRequest, type ChatRequest } from './chat-request.js';
export { DEFAULT_REDIS_PREFIX } from './redis-keys.js';
export { redisSessions, type RedisSessionsOptions } from './redis-sessions.js';
export { SharedTurnLostError, redisTurns, type RedisTurnsOptions } from './redis-turns.js';
export type { SharedTurns, SharedTurnWriter } from './shared-turns.js';
export { TurnReaderDetachedError } from './turn-stream.js';
export { directorySessions, isValidChatId, memorySessions, type ChatSessions } from './sessions.js';
export { createPageHandler, PAGE_ASSETS_DIR, PAGE_PATHS, registerPage, type PageOptions } from './page.js';
export { createSavedChatHandler, type RouteHandler, type SavedChatOptions } from './page-routes.js';
export { createServer, mountChatHandler, type ServerOptions } from './server.js';
export { SSE_DONE, sseFrame, UiChunkWriter, type ChatMessageMetadata, type RetryChunkData, type StepMetadata, type UiFinishReason, type UiMessageChunk, type UsageMetadata } from './ui-chunks.js';
