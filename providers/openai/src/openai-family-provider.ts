import { BaseChatProvider, type ProviderChanges, type Secrets, type ThinkingEffort } from '@kosong/core/provider-kit';

import type { ChatCompletionsConnection } from './chat-completions-connection.js';
import { reasoningEffortToThinkingEffort, thinkingEffortToReasoningEffort } from './reasoning-effort.js';

/**
 * What the providers on the `openai` SDK share besides the kit's plumbing: one connection (its
 * client shared by every copy), the provider's own options in its API's terms, the base URL in what
 * logs show, the connection's secrets kept out of it, and the effort as `reasoning_effort` takes it.
 *
 * @typeParam Own - the provider's own generation options (Chat Completions' or Responses').
 */
export abstract class OpenAIFamilyProvider<Own> extends BaseChatProvider {
  constructor(
    protected readonly connection: ChatCompletionsConnection,
    protected readonly own: Own,
  ) {
    super();
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.connection.baseURL;
  }

  /** The provider's own generation options every request carries, in its API's terms. */
  get generationOptions(): Own {
    return this.own;
  }

  /**
   * `withThinking` asks for the effort as `reasoning_effort` (kosong spec §7.1, §7.4): `low`,
   * `medium`, `high` and `xhigh` as they are, `max` as `xhigh` (and `thinkingEffort` reads `xhigh`),
   * `off` per the provider's `thinkingOff` option.
   */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: reasoningEffortToThinkingEffort(thinkingEffortToReasoningEffort(effort)) };
  }

  protected override describe(): Record<string, unknown> {
    return { baseURL: this.baseURL };
  }

  protected override secrets(): Secrets {
    return this.connection.secrets();
  }
}
