/**
 * The `LanguageModelV4` specification (AI SDK 7's `@ai-sdk/provider` 4), as this package's own
 * types: the root install has `@ai-sdk/provider` 3 (AI SDK 6, Node ≥ 18), whose types stop at V3,
 * because AI SDK 7's packages declare Node ≥ 22. Only what the bridge sends and reads is typed here
 * (the call options, the prompt, the stream parts, the model); the shapes are the spec's. What V4
 * shares with V3 (JSON values, JSON Schema, tool choice) is taken from `@ai-sdk/provider` 3.
 *
 * @module
 */
import type { JSONObject, JSONSchema7, JSONValue, LanguageModelV3ToolChoice } from '@ai-sdk/provider';

/** Provider options of a call, a message or a part (by provider id). */
export type SharedV4ProviderOptions = Record<string, JSONObject>;
/** Provider metadata of a stream part (by provider id). */
export type SharedV4ProviderMetadata = Record<string, JSONObject>;

/** File data given inline (base64 string or bytes). */
export interface SharedV4FileDataData { type: 'data'; data: Uint8Array | string }
/** File data given by URL. */
export interface SharedV4FileDataUrl { type: 'url'; url: URL; originalUrl?: string }
/** File data given by a provider's reference (an uploaded file's id, by provider). */
export interface SharedV4FileDataReference { type: 'reference'; reference: Record<string, string> & { type?: never } }
/** File data given as text. */
export interface SharedV4FileDataText { type: 'text'; text: string }
export type SharedV4FileData = SharedV4FileDataData | SharedV4FileDataUrl | SharedV4FileDataReference | SharedV4FileDataText;

/** A warning of the model (in `stream-start`). */
export type SharedV4Warning =
  | { type: 'unsupported'; feature: string; details?: string }
  | { type: 'compatibility'; feature: string; details?: string }
  | { type: 'deprecated'; setting: string; message: string }
  | { type: 'other'; message: string };

// ---- the prompt ----

export interface LanguageModelV4TextPart { type: 'text'; text: string; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4ReasoningPart { type: 'reasoning'; text: string; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4ReasoningFilePart { type: 'reasoning-file'; data: SharedV4FileDataData | SharedV4FileDataUrl; mediaType: string; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4CustomPart { type: 'custom'; kind: `${string}.${string}`; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4FilePart { type: 'file'; filename?: string; data: SharedV4FileData; mediaType: string; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4ToolCallPart { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4ToolResultPart { type: 'tool-result'; toolCallId: string; toolName: string; output: LanguageModelV4ToolResultOutput; providerOptions?: SharedV4ProviderOptions }
export interface LanguageModelV4ToolApprovalResponsePart { type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string; providerOptions?: SharedV4ProviderOptions }

/** A tool result's output (V4 has one `file` content kind where V3 had `image-data`, `file-url`, …). */
export type LanguageModelV4ToolResultOutput =
  | { type: 'text'; value: string; providerOptions?: SharedV4ProviderOptions }
  | { type: 'json'; value: JSONValue; providerOptions?: SharedV4ProviderOptions }
  | { type: 'execution-denied'; reason?: string; providerOptions?: SharedV4ProviderOptions }
  | { type: 'error-text'; value: string; providerOptions?: SharedV4ProviderOptions }
  | { type: 'error-json'; value: JSONValue; providerOptions?: SharedV4ProviderOptions }
  | {
      type: 'content';
      value: Array<
        | { type: 'text'; text: string; providerOptions?: SharedV4ProviderOptions }
        | { type: 'file'; data: SharedV4FileData; mediaType: string; filename?: string; providerOptions?: SharedV4ProviderOptions }
        | { type: 'custom'; providerOptions?: SharedV4ProviderOptions }
      >;
    };

export type LanguageModelV4Message = (
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<LanguageModelV4TextPart | LanguageModelV4FilePart> }
  | {
      role: 'assistant';
      content: Array<LanguageModelV4TextPart | LanguageModelV4FilePart | LanguageModelV4CustomPart | LanguageModelV4ReasoningPart | LanguageModelV4ReasoningFilePart | LanguageModelV4ToolCallPart | LanguageModelV4ToolResultPart>;
    }
  | { role: 'tool'; content: Array<LanguageModelV4ToolResultPart | LanguageModelV4ToolApprovalResponsePart> }
) & { providerOptions?: SharedV4ProviderOptions };

export type LanguageModelV4Prompt = Array<LanguageModelV4Message>;

// ---- the call ----

export interface LanguageModelV4FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  inputSchema: JSONSchema7;
  inputExamples?: Array<{ input: JSONObject }>;
  strict?: boolean;
  providerOptions?: SharedV4ProviderOptions;
}
export interface LanguageModelV4ProviderTool { type: 'provider'; id: `${string}.${string}`; name: string; args: Record<string, unknown> }
export type LanguageModelV4ToolChoice = LanguageModelV3ToolChoice;

export interface LanguageModelV4CallOptions {
  prompt: LanguageModelV4Prompt;
  maxOutputTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: JSONSchema7; name?: string; description?: string };
  seed?: number;
  tools?: Array<LanguageModelV4FunctionTool | LanguageModelV4ProviderTool>;
  toolChoice?: LanguageModelV4ToolChoice;
  includeRawChunks?: boolean;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  /** New in V4: the reasoning effort. */
  reasoning?: 'provider-default' | 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
  providerOptions?: SharedV4ProviderOptions;
}

// ---- the result ----

export interface LanguageModelV4Usage {
  inputTokens: { total: number | undefined; noCache: number | undefined; cacheRead: number | undefined; cacheWrite: number | undefined };
  outputTokens: { total: number | undefined; text: number | undefined; reasoning: number | undefined };
  raw?: JSONObject;
}
export interface LanguageModelV4FinishReason {
  unified: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'interrupted' | 'other';
  raw: string | undefined;
}
export interface LanguageModelV4ResponseMetadata { id?: string; timestamp?: Date; modelId?: string }

export type LanguageModelV4Source =
  | { type: 'source'; sourceType: 'url'; id: string; url: string; title?: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'source'; sourceType: 'document'; id: string; mediaType: string; title: string; filename?: string; providerMetadata?: SharedV4ProviderMetadata };
export interface LanguageModelV4Citation { source: LanguageModelV4Source; startIndex?: number; endIndex?: number; citedText?: string }
export interface LanguageModelV4File { type: 'file'; mediaType: string; data: SharedV4FileDataData | SharedV4FileDataUrl; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4ReasoningFile { type: 'reasoning-file'; mediaType: string; data: SharedV4FileDataData | SharedV4FileDataUrl; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4CustomContent { type: 'custom'; kind: `${string}.${string}`; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4ToolApprovalRequest { type: 'tool-approval-request'; approvalId: string; toolCallId: string; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4ToolCall { type: 'tool-call'; toolCallId: string; toolName: string; input: string; providerExecuted?: boolean; dynamic?: boolean; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4ToolResult {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  result: NonNullable<JSONValue>;
  isError?: boolean;
  preliminary?: boolean;
  dynamic?: boolean;
  providerMetadata?: SharedV4ProviderMetadata;
}
export interface LanguageModelV4Text { type: 'text'; text: string; citations?: Array<LanguageModelV4Citation>; providerMetadata?: SharedV4ProviderMetadata }
export interface LanguageModelV4Reasoning { type: 'reasoning'; text: string; providerMetadata?: SharedV4ProviderMetadata }
export type LanguageModelV4Content =
  | LanguageModelV4Text
  | LanguageModelV4Reasoning
  | LanguageModelV4CustomContent
  | LanguageModelV4ReasoningFile
  | LanguageModelV4File
  | LanguageModelV4ToolApprovalRequest
  | LanguageModelV4Source
  | LanguageModelV4ToolCall
  | LanguageModelV4ToolResult;

export type LanguageModelV4StreamPart =
  | { type: 'text-start'; id: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'text-delta'; id: string; delta: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'text-end'; id: string; citations?: Array<LanguageModelV4Citation>; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'reasoning-start'; id: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'reasoning-delta'; id: string; delta: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'reasoning-end'; id: string; providerMetadata?: SharedV4ProviderMetadata }
  | {
      type: 'tool-input-start';
      id: string;
      toolName: string;
      inputEncoding?: 'json' | 'text';
      providerMetadata?: SharedV4ProviderMetadata;
      providerExecuted?: boolean;
      dynamic?: boolean;
      title?: string;
    }
  | { type: 'tool-input-delta'; id: string; delta: string; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'tool-input-end'; id: string; providerMetadata?: SharedV4ProviderMetadata }
  | LanguageModelV4ToolApprovalRequest
  | LanguageModelV4ToolCall
  | LanguageModelV4ToolResult
  | LanguageModelV4CustomContent
  | LanguageModelV4File
  | LanguageModelV4ReasoningFile
  | LanguageModelV4Source
  | { type: 'stream-start'; warnings: Array<SharedV4Warning> }
  | ({ type: 'response-metadata' } & LanguageModelV4ResponseMetadata)
  | { type: 'finish'; usage: LanguageModelV4Usage; finishReason: LanguageModelV4FinishReason; providerMetadata?: SharedV4ProviderMetadata }
  | { type: 'ping' }
  | { type: 'raw'; rawValue: unknown }
  | { type: 'error'; error: unknown };

export interface LanguageModelV4StreamResult {
  stream: ReadableStream<LanguageModelV4StreamPart>;
  request?: { url?: string; body?: unknown };
  response?: { headers?: Record<string, string> };
}
export interface LanguageModelV4GenerateResult {
  content: Array<LanguageModelV4Content>;
  structuredOutputText?: string;
  finishReason: LanguageModelV4FinishReason;
  usage: LanguageModelV4Usage;
  providerMetadata?: SharedV4ProviderMetadata;
  request?: { url?: string; body?: unknown };
  response?: LanguageModelV4ResponseMetadata & { headers?: Record<string, string>; body?: unknown };
  warnings: Array<SharedV4Warning>;
}

/** A language model of the V4 spec. */
export interface LanguageModelV4 {
  readonly specificationVersion: 'v4';
  readonly provider: string;
  readonly modelId: string;
  supportedUrls: PromiseLike<Record<string, RegExp[]>> | Record<string, RegExp[]>;
  doGenerate(options: LanguageModelV4CallOptions): PromiseLike<LanguageModelV4GenerateResult>;
  doStream(options: LanguageModelV4CallOptions): PromiseLike<LanguageModelV4StreamResult>;
}
