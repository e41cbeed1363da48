/**
 * Sampling (`sampling/createMessage`): a server asks the client's model for a completion. Served by
 * a kosong `ChatProvider`, each request through an approval callback.
 *
 * @module
 */
import {
  audioURLPart,
  createMessage,
  extractText,
  generate,
  imageURLPart,
  textPart,
  type ChatProvider,
  type ContentPart,
  type FinishReason,
  type Message,
} from '@kosong/core';
import { describeError } from '@kosong/core/toolset-kit';
import { McpError, type CreateMessageRequest, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC error code of a sampling request the client refused (the spec's "user rejected" example). */
export const MCP_SAMPLING_REFUSED_CODE = -1;

/** What a server asked for, as the approval callback sees it. */
export interface McpSamplingRequest {
  /** The server's name (see `McpToolsetOptions.name`). */
  readonly server: string;
  /** The request as the server sent it (messages, `systemPrompt`, `maxTokens`, `modelPreferences`, …). */
  readonly params: CreateMessageRequest['params'];
  /** The messages as kosong messages, as the provider will get them. */
  readonly history: readonly Message[];
  /** Aborts when the server cancels the request or the connection ends. */
  readonly signal: AbortSignal;
}

/**
 * Decides whether a sampling request may spend the provider's tokens: `true` runs it, `false`
 * refuses it (the server gets an MCP error). A throw refuses it too.
 */
export type McpSamplingApproval = (request: McpSamplingRequest) => boolean | Promise<boolean>;

/** The `sampling` option of an MCP toolset: which provider answers, and who approves. */
export interface McpSamplingOptions {
  /** The provider that answers the server's requests (its model is named in the answer). */
  readonly provider: ChatProvider;
  /**
   * Asked before each request (a server may not spend tokens unasked). Without it every request is
   * refused with an MCP error that says so.
   */
  readonly approve?: McpSamplingApproval;
  /** An upper bound on the `maxTokens` a server may ask for; default: the server's value. */
  readonly maxTokens?: number;
}

/** The kosong messages of a sampling request (text, image and audio; other blocks as a text note). */
export function samplingHistory(params: CreateMessageRequest['params']): Message[] {
  return params.messages.map((message) => {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    return createMessage(message.role, blocks.map(samplingPart));
  });
}

function samplingPart(block: { readonly type: string } & Record<string, unknown>): ContentPart {
  switch (block.type) {
    case 'text':
      return textPart(String(block['text']));
    case 'image':
      return imageURLPart(`data:${String(block['mimeType'])};base64,${String(block['data'])}`);
    case 'audio':
      return audioURLPart(`data:${String(block['mimeType'])};base64,${String(block['data'])}`);
    default:
      return textPart(`[Unsupported content: ${block.type}]`);
  }
}

/**
 * Answers one sampling request: asks `approve`, then runs one generation on the provider (no tools)
 * and gives its text back. Refusals and failures are `McpError`s (the server gets them as errors).
 */
export async function answerSampling(
  server: string,
  options: McpSamplingOptions,
  params: CreateMessageRequest['params'],
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const history = samplingHistory(params);
  if (!options.approve) {
    throw new McpError(MCP_SAMPLING_REFUSED_CODE, `the client refused the sampling request: no approval handler (sampling.approve) is set for MCP server "${server}"`);
  }
  let approved: boolean;
  try {
    approved = (await options.approve({ server, params, history, signal })) === true;
  } catch (error) {
    throw new McpError(MCP_SAMPLING_REFUSED_CODE, `the client refused the sampling request: its approval handler failed: ${describeError(error)}`);
  }
  if (!approved) throw new McpError(MCP_SAMPLING_REFUSED_CODE, 'the client refused the sampling request (not approved)');
  signal.throwIfAborted();

  const maxTokens = options.maxTokens === undefined ? params.maxTokens : Math.min(params.maxTokens, options.maxTokens);
  let result;
  try {
    result = await generate({
      provider: options.provider,
      systemPrompt: params.systemPrompt ?? '',
      history,
      signal,
      generation: {
        maxOutputTokens: maxTokens,
        ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
        ...(params.stopSequences === undefined ? {} : { stopSequences: params.stopSequences }),
      },
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new McpError(-32603, `the client's model failed: ${describeError(error)}`);
  }
  return {
    role: 'assistant',
    content: { type: 'text', text: extractText(result.message) },
    model: options.provider.modelName,
    ...stopReason(result.finishReason),
  };
}

function stopReason(reason: FinishReason | undefined): { stopReason?: string } {
  switch (reason) {
    case 'stop':
      return { stopReason: 'endTurn' };
    case 'length':
      return { stopReason: 'maxTokens' };
    case undefined:
      return {};
    default:
      return { stopReason: reason };
  }
}
