import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';

import type { StreamingEndpoint } from './streaming-endpoint.js';

/** `POST /responses` with `client.responses.create`. */
export const RESPONSES_ENDPOINT: StreamingEndpoint = {
  name: 'Responses',
  endMarker: 'response.completed',
  send: (client, body, options) => client.responses.create(body as unknown as ResponseCreateParamsStreaming, options),
};
