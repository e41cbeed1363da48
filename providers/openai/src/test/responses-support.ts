import { OpenAIResponsesChatProvider, type OpenAIResponsesChatProviderOptions } from '../index.js';
import { ResponsesServer } from '../testing/index.js';
import { TEST_KEY } from './support.js';

/** A Responses server started before each test and closed after it, and a provider talking to it. */
export function useResponsesServer(): {
  readonly server: ResponsesServer;
  provider(options?: Partial<OpenAIResponsesChatProviderOptions>): OpenAIResponsesChatProvider;
} {
  const holder = {
    server: undefined as unknown as ResponsesServer,
    provider(options: Partial<OpenAIResponsesChatProviderOptions> = {}): OpenAIResponsesChatProvider {
      return new OpenAIResponsesChatProvider({ baseURL: holder.server.baseURL, apiKey: TEST_KEY, model: 'gpt-5.1', ...options });
    },
  };
  beforeEach(async () => {
    holder.server = await ResponsesServer.start();
  });
  afterEach(async () => {
    await holder.server.close();
  });
  return holder;
}

/** The body of the server's last request. */
export function lastBody(server: ResponsesServer): Record<string, unknown> {
  return server.lastRequest.body as Record<string, unknown>;
}
