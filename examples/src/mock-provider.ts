import { APIConnectionError, generate, textPart, tokenUsage, type StreamedMessagePart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';

const parts = [textPart('Hello'), textPart(', '), textPart('world'), textPart('!')];
const usage = tokenUsage({ inputOther: 12, output: 4 });

const provider = new MockChatProvider(parts, {
  delayMs: 5,                                            // wait before each part
  errorAfter: { parts: 3, error: new APIConnectionError('reset') }, // fail mid-stream
  generateError: undefined,                              // or: fail the request itself
  onAbort: 'prompt',                                     // 'ignore' imitates a provider deaf to its signal
  id: 'msg-1', usage, finishReason: 'stop', traceId: 't-1',
});

let streamed = '';
const onPart = (part: StreamedMessagePart): void => void (part.type === 'text' && (streamed += part.text));
try {
  await generate({ provider, systemPrompt: '', history: [], onPart });
} catch (error) {
  console.log(`${streamed} | ${(error as Error).name}: ${(error as Error).message}`); // Hello, world | APIConnectionError: reset
}
