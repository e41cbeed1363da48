/**
 * The response side, part by part: the model's stream parts as kosong parts, the finish reason,
 * usage and message id, through `generate()` and `step()`; and the spec's edge cases with the AI
 * SDK's own `MockLanguageModelV3` (`ai/test` of ai 6) and the v4 test model of `support.ts`: a
 * `tool-call` without input deltas, an `error` part mid-stream, a stream that ends without `finish`.
 */
import type { LanguageModelV4StreamPart } from '../spec-v4.js';
import {
  APIConnectionError,
  APITimeoutError,
  ChatProviderError,
  generate,
  step,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  toolOk,
  type StreamedMessagePart,
  type Toolset,
} from '@kosong/core';
import { expect } from 'chai';

import { aiSdkProvider } from '../ai-sdk-provider.js';
import { encodeReasoningMetadata, TOOL_CALL_METADATA_KEY } from '../provider-metadata.js';
import { collect, drain, finish, GO, modelV2, modelV3, modelV4, modelWith, rejection, streamedCall, textBlock, USAGE } from './support.js';

/** A toolset whose tool records when it started (relative to `since`) and answers at once. */
function recordingToolset(): Toolset & { readonly started: string[] } {
  const started: string[] = [];
  return {
    started,
    tools: [{ name: 'lookup', description: 'Looks up.', parameters: { type: 'object' } }],
    handle: (call) => {
      started.push(call.id);
      return { toolCallId: call.id, returnValue: toolOk({ output: `found ${call.function.arguments ?? ''}` }) };
    },
  };
}

/** A stream of parts the test releases one at a time. */
function gatedModel(): { model: ReturnType<typeof modelWith>; push: (...parts: LanguageModelV4StreamPart[]) => void; close: () => void; cancelled: Promise<unknown> } {
  let controller!: ReadableStreamDefaultController<LanguageModelV4StreamPart>;
  let onCancel!: (reason: unknown) => void;
  const cancelled = new Promise((resolve) => (onCancel = resolve));
  const stream = new ReadableStream<LanguageModelV4StreamPart>({ start: (c) => void (controller = c), cancel: (reason) => onCancel(reason) });
  const model = modelWith(async () => ({ stream }));
  return { model, push: (...parts) => parts.forEach((part) => controller.enqueue(part)), close: () => controller.close(), cancelled };
}

describe('aiSdkProvider: the stream', () => {
  it('text-* → text parts (merged by generate), response-metadata → the message id, finish → finish reason and usage', async () => {
    const model = modelV4([{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: 'resp_1', modelId: 'mock-model-2026' }, ...textBlock('t', 'Hello', ', ', 'world'), finish()]);
    const seen: StreamedMessagePart[] = [];
    const result = await generate({ provider: aiSdkProvider(model), systemPrompt: '', history: [...GO], onMessagePart: (part) => void seen.push(part) });
    expect(seen).to.deep.equal([textPart('Hello'), textPart(', '), textPart('world')]);
    expect(result.message.content).to.deep.equal([textPart('Hello, world')]);
    expect(result.id).to.equal('resp_1');
    expect(result.finishReason).to.equal('stop');
    // noCache 70 (neither read nor written), cache read 20, cache write 10; output with reasoning
    expect(result.usage).to.deep.equal({ inputOther: 70, inputCacheRead: 20, inputCacheCreation: 10, output: 30 });
  });

  it('usage: reasoning tokens are on the stream; a total without the split counts as uncached', async () => {
    const model = modelV4([
      ...textBlock('t', 'ok'),
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 50, noCache: undefined, cacheRead: 5, cacheWrite: undefined }, outputTokens: { total: undefined, text: 7, reasoning: 3 } } },
    ]);
    const stream = await aiSdkProvider(model).generate('', [], GO);
    await collect(stream);
    expect(stream.usage).to.deep.equal({ inputOther: 45, inputCacheRead: 5, inputCacheCreation: 0, output: 10 });
    expect(stream.reasoningTokens).to.equal(3);
    expect(stream.responseModelId).to.equal(undefined);
  });

  it('usage unknown to the model: no usage', async () => {
    const model = modelV4([...textBlock('t', 'ok'), { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } } }]);
    const stream = await aiSdkProvider(model).generate('', [], GO);
    await collect(stream);
    expect(stream.usage).to.equal(undefined);
  });

  for (const [unified, reason] of [
    ['stop', 'stop'],
    ['length', 'length'],
    ['content-filter', 'content_filter'],
    ['tool-calls', 'tool_calls'],
    ['error', 'other'],
    ['other', 'other'],
  ] as const) {
    it(`finish reason ${unified} → ${reason}`, async () => {
      const stream = await aiSdkProvider(modelV4([...textBlock('t', 'x'), finish(unified)])).generate('', [], GO);
      await collect(stream);
      expect(stream.finishReason).to.equal(reason);
    });
  }

  it('v2: finish reason and flat usage (cached input tokens are cache reads)', async () => {
    const model = modelV2([
      { type: 'text-delta', id: 't', delta: 'ok' },
      { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 40, outputTokens: 9, totalTokens: 49, reasoningTokens: 2, cachedInputTokens: 15 } },
    ]);
    const stream = await aiSdkProvider(model).generate('', [], GO);
    expect(await collect(stream)).to.deep.equal([textPart('ok')]);
    expect(stream.finishReason).to.equal('tool_calls');
    expect(stream.usage).to.deep.equal({ inputOther: 25, inputCacheRead: 15, inputCacheCreation: 0, output: 9 });
    expect(stream.reasoningTokens).to.equal(2);
  });

  it('reasoning-* → think parts; the block\'s provider metadata closes it as `encrypted`, and goes back as providerOptions on the next step', async () => {
    const model = modelV4(
      [
        { type: 'reasoning-start', id: 'r1' },
        { type: 'reasoning-delta', id: 'r1', delta: 'Let me ' },
        { type: 'reasoning-delta', id: 'r1', delta: 'think.' },
        { type: 'reasoning-delta', id: 'r1', delta: '', providerMetadata: { anthropic: { signature: 'sig-1' } } },
        { type: 'reasoning-end', id: 'r1' },
        { type: 'reasoning-start', id: 'r2', providerMetadata: { anthropic: { redactedData: 'opaque' } } },
        { type: 'reasoning-end', id: 'r2' },
        ...textBlock('t', 'Answer.'),
        finish(),
      ],
      [...textBlock('t', 'again'), finish()],
    );
    const provider = aiSdkProvider(model);
    const first = await generate({ provider, systemPrompt: '', history: [...GO] });
    expect(first.message.content).to.deep.equal([
      thinkPart('Let me think.', encodeReasoningMetadata({ anthropic: { signature: 'sig-1' } })),
      thinkPart('', encodeReasoningMetadata({ anthropic: { redactedData: 'opaque' } })),
      textPart('Answer.'),
    ]);
    // the message survives JSON (as a persisted history does), and the next step sends the metadata back
    const history = JSON.parse(JSON.stringify([...GO, first.message]));
    await generate({ provider, systemPrompt: '', history });
    expect(model.doStreamCalls[1]!.prompt[1]).to.deep.equal({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me think.', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
        { type: 'text', text: 'Answer.' },
      ],
    });
  });

  it('reasoning metadata of start and end merge per provider (OpenAI: item id, then the encrypted content)', async () => {
    const model = modelV4([
      { type: 'reasoning-start', id: 'rs_1:0', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: null } } },
      { type: 'reasoning-delta', id: 'rs_1:0', delta: 'Thinking.' },
      { type: 'reasoning-end', id: 'rs_1:0', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA' } } },
      ...textBlock('t', 'ok'),
      finish(),
    ]);
    const result = await generate({ provider: aiSdkProvider(model), systemPrompt: '', history: [...GO] });
    expect(result.message.content[0]).to.deep.equal(thinkPart('Thinking.', encodeReasoningMetadata({ openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA' } })));
  });

  it('tool-input-start/delta/end → a tool call and tool-call parts; tool-call completes it; step() dispatches each while the model still streams', async () => {
    const gate = gatedModel();
    const toolset = recordingToolset();
    const parts: StreamedMessagePart[] = [];
    const running = step({ provider: aiSdkProvider(gate.model), systemPrompt: '', toolset, history: [...GO], onMessagePart: (part) => void parts.push(part) });
    gate.push(...textBlock('t', 'Looking.'), ...streamedCall('call_1', 'lookup', '{"q":', '"a"}'), { type: 'tool-input-start', id: 'call_2', toolName: 'lookup' });
    await until(() => toolset.started.length === 1);
    expect(toolset.started, 'the first call runs once the second starts, the stream still open').to.deep.equal(['call_1']);
    gate.push({ type: 'tool-input-delta', id: 'call_2', delta: '{"q":"b"}' }, { type: 'tool-input-end', id: 'call_2' }, { type: 'tool-call', toolCallId: 'call_2', toolName: 'lookup', input: '{"q":"b"}' }, finish('tool-calls'));
    gate.close();
    const result = await running;
    expect(parts).to.deep.equal([textPart('Looking.'), toolCall('call_1', 'lookup', null), toolCallPart('{"q":'), toolCallPart('"a"}'), toolCall('call_2', 'lookup', null), toolCallPart('{"q":"b"}')]);
    expect(result.toolCalls.map((call) => [call.id, call.function.arguments])).to.deep.equal([
      ['call_1', '{"q":"a"}'],
      ['call_2', '{"q":"b"}'],
    ]);
    expect((await result.toolResults()).map((r) => r.returnValue.output)).to.deep.equal(['found {"q":"a"}', 'found {"q":"b"}']);
    expect(result.finishReason).to.equal('tool_calls');
  });

  it('edge case (v4 test model): a tool-call without any input deltas is one whole call, with its provider metadata', async () => {
    const model = modelV4([{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"q":"x"}', providerMetadata: { google: { thoughtSignature: 'ts' } } }, finish('tool-calls')]);
    const toolset = recordingToolset();
    const result = await step({ provider: aiSdkProvider(model), systemPrompt: '', toolset, history: [...GO] });
    expect(result.toolCalls).to.deep.equal([toolCall('c1', 'lookup', '{"q":"x"}', { [TOOL_CALL_METADATA_KEY]: { google: { thoughtSignature: 'ts' } } })]);
    expect((await result.toolResults())[0]!.returnValue.output).to.equal('found {"q":"x"}');
  });

  it('edge case (MockLanguageModelV3): tool-input-start then tool-call with no delta: the call gets the whole input', async () => {
    const model = modelV3([{ type: 'tool-input-start', id: 'c1', toolName: 'lookup' }, { type: 'tool-input-end', id: 'c1' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{}' }, finish('tool-calls')] as never);
    const result = await generate({ provider: aiSdkProvider(model), systemPrompt: '', history: [...GO] });
    expect(result.message.toolCalls).to.deep.equal([toolCall('c1', 'lookup', '{}')]);
  });

  it('a call whose final input is the streamed one re-encoded is kept as streamed; one that differs fails the stream', async () => {
    const same = modelV4([{ type: 'tool-input-start', id: 'c', toolName: 'f' }, { type: 'tool-input-delta', id: 'c', delta: '{ "a": 1 }' }, { type: 'tool-call', toolCallId: 'c', toolName: 'f', input: '{"a":1}' }, finish()]);
    expect((await generate({ provider: aiSdkProvider(same), systemPrompt: '', history: [...GO] })).message.toolCalls).to.deep.equal([toolCall('c', 'f', '{ "a": 1 }')]);
    const other = modelV4([{ type: 'tool-input-start', id: 'c', toolName: 'f' }, { type: 'tool-input-delta', id: 'c', delta: '{"a":1}' }, { type: 'tool-call', toolCallId: 'c', toolName: 'f', input: '{"a":2}' }, finish()]);
    const caught = await rejection(generate({ provider: aiSdkProvider(other), systemPrompt: '', history: [...GO] }));
    expect(ChatProviderError.isInstance(caught)).to.equal(true);
    expect((caught as Error).message).to.contain('"c"').and.contain('differs');
  });

  it('inputs of parallel calls that interleave: the first was dispatched when the second started, so its late input fails the stream', async () => {
    const model = modelV4([
      { type: 'tool-input-start', id: 'a', toolName: 'f' },
      { type: 'tool-input-delta', id: 'a', delta: '{"x":' },
      { type: 'tool-input-start', id: 'b', toolName: 'f' },
      { type: 'tool-input-delta', id: 'a', delta: '1}' },
      { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: '{"x":1}' },
      finish(),
    ]);
    const caught = await rejection(generate({ provider: aiSdkProvider(model), systemPrompt: '', history: [...GO] }));
    expect((caught as Error).message).to.contain('"a"').and.contain('went on after another part had ended it');
  });

  it('a call with raw text deltas (inputEncoding text) comes whole at its tool-call', async () => {
    const model = modelV4([
      { type: 'tool-input-start', id: 'c', toolName: 'patch', inputEncoding: 'text' },
      { type: 'tool-input-delta', id: 'c', delta: '*** Begin' },
      { type: 'tool-input-end', id: 'c' },
      { type: 'tool-call', toolCallId: 'c', toolName: 'patch', input: '"*** Begin"' },
      finish(),
    ]);
    expect(await collect(await aiSdkProvider(model).generate('', [], GO))).to.deep.equal([toolCall('c', 'patch', '"*** Begin"')]);
  });

  it('provider-executed tools never become client calls (nor their results)', async () => {
    const model = modelV4([
      { type: 'tool-input-start', id: 'ws_1', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-delta', id: 'ws_1', delta: '{"query":"x"}' },
      { type: 'tool-input-end', id: 'ws_1' },
      { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{"query":"x"}', providerExecuted: true },
      { type: 'tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 3 } },
      { type: 'tool-call', toolCallId: 'ci_1', toolName: 'code_execution', input: '{}', providerExecuted: true },
      ...textBlock('t', 'Found it.'),
      finish(),
    ]);
    const toolset = recordingToolset();
    const result = await step({ provider: aiSdkProvider(model), systemPrompt: '', toolset, history: [...GO] });
    expect(result.toolCalls).to.deep.equal([]);
    expect(result.message.content).to.deep.equal([textPart('Found it.')]);
    expect(toolset.started).to.deep.equal([]);
  });

  it('file parts of images, audio and video → media parts (data: URIs or URLs); other files and sources are left out', async () => {
    const model = modelV4([
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBOR' } },
      { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: new Uint8Array([1, 2, 3]) } },
      { type: 'file', mediaType: 'video/mp4', data: { type: 'url', url: new URL('https://example.com/v.mp4') } },
      { type: 'file', mediaType: 'application/pdf', data: { type: 'data', data: 'JVBER' } },
      { type: 'source', sourceType: 'url', id: 's', url: 'https://example.com' },
      finish(),
    ]);
    expect(await collect(await aiSdkProvider(model).generate('', [], GO))).to.deep.equal([
      { type: 'image_url', imageUrl: { url: 'data:image/png;base64,iVBOR' } },
      { type: 'audio_url', audioUrl: { url: 'data:audio/wav;base64,AQID' } },
      { type: 'video_url', videoUrl: { url: 'https://example.com/v.mp4' } },
    ]);
    const v3 = modelV3([{ type: 'file', mediaType: 'image/jpeg', data: '/9j/' }, finish()] as never);
    expect(await collect(await aiSdkProvider(v3).generate('', [], GO))).to.deep.equal([{ type: 'image_url', imageUrl: { url: 'data:image/jpeg;base64,/9j/' } }]);
  });

  it('edge case (v4 test model): an error part mid-stream: the parts before it come, then its error, converted', async () => {
    const model = modelV4([...textBlock('t', 'partial'), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded', isRetryable: true } }, ...textBlock('u', 'never'), finish()]);
    const { parts, error } = await drain(await aiSdkProvider(model).generate('', [], GO));
    expect(parts).to.deep.equal([textPart('partial')]);
    expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
    expect((error as Error).message).to.equal("The model's stream sent an error (overloaded_error): Overloaded");
  });

  it('edge case (MockLanguageModelV3): an error part with a status → an APIStatusError of that status', async () => {
    const model = modelV3([{ type: 'error', error: { message: 'rate limited', statusCode: 429 } }] as never);
    const { error } = await drain(await aiSdkProvider(model).generate('', [], GO));
    expect(error).to.include({ statusCode: 429 });
  });

  it('edge case (v4 test model and MockLanguageModelV3): a stream that ends without finish is incomplete: APIConnectionError (retryable), after its parts', async () => {
    for (const model of [modelV4(textBlock('t', 'cut')), modelV3(textBlock('t', 'cut') as never)]) {
      const { parts, error } = await drain(await aiSdkProvider(model).generate('', [], GO));
      expect(parts).to.deep.equal([textPart('cut')]);
      expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.contain('no finish part');
    }
    const interrupted = await drain(await aiSdkProvider(modelV4([...textBlock('t', 'cut'), finish('interrupted')])).generate('', [], GO));
    expect((interrupted.error as Error).message).to.contain('"interrupted"');
  });

  it('a stream that breaks (its read throws) → the converted error', async () => {
    let pulls = 0;
    const broken = new ReadableStream({
      pull: (controller) => {
        if (pulls++ === 0) controller.enqueue({ type: 'text-delta', id: 't', delta: 'a' });
        else controller.error(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }));
      },
    }, { highWaterMark: 0 });
    const { parts, error } = await drain(await aiSdkProvider(modelWith(async () => ({ stream: broken }))).generate('', [], GO));
    expect(parts).to.deep.equal([textPart('a')]);
    expect(APIConnectionError.isInstance(error), String(error)).to.equal(true);
  });

  it('abort mid-stream: the signal\'s reason, at once, and the model\'s stream is cancelled (even by a model that ignores its signal)', async () => {
    const gate = gatedModel();
    const controller = new AbortController();
    const stream = await aiSdkProvider(gate.model).generate('', [], GO, { signal: controller.signal });
    gate.push(...textBlock('t', 'one'));
    const reason = new Error('stop');
    const reading = drain(stream);
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(reason);
    const { parts, error } = await reading;
    expect(parts).to.deep.equal([textPart('one')]);
    expect(error).to.equal(reason);
    expect(await gate.cancelled).to.equal(reason);
    expect(gate.model.doStreamCalls[0]!.abortSignal!.aborted).to.equal(true);
  });

  it('abort while the model has not answered: generate rejects with the reason at once; an aborted signal calls nothing', async () => {
    const model = modelWith(() => new Promise(() => undefined));
    const controller = new AbortController();
    const pending = aiSdkProvider(model).generate('', [], GO, { signal: controller.signal });
    const reason = new Error('cancelled');
    controller.abort(reason);
    expect(await rejection(pending)).to.equal(reason);
    const idle = modelV4([finish()]);
    expect(await rejection(aiSdkProvider(idle).generate('', [], GO, { signal: AbortSignal.abort(reason) }))).to.equal(reason);
    expect(idle.doStreamCalls).to.have.length(0);
  });

  it('timeouts: no answer, or a silent stream, within timeoutMs → APITimeoutError, the model\'s request aborted', async () => {
    const silent = modelWith(() => new Promise(() => undefined));
    const caught = await rejection(aiSdkProvider(silent, { timeoutMs: 50 }).generate('', [], GO));
    expect(APITimeoutError.isInstance(caught), String(caught)).to.equal(true);
    expect(silent.doStreamCalls[0]!.abortSignal!.aborted).to.equal(true);
    const gate = gatedModel();
    const stream = await aiSdkProvider(gate.model, { timeoutMs: 50 }).generate('', [], GO);
    gate.push(...textBlock('t', 'a'));
    const { parts, error } = await drain(stream);
    expect(parts).to.deep.equal([textPart('a')]);
    expect(APITimeoutError.isInstance(error), String(error)).to.equal(true);
  });

  it('a consumer that stops early aborts the model\'s request and cancels its stream', async () => {
    const gate = gatedModel();
    const stream = await aiSdkProvider(gate.model).generate('', [], GO);
    gate.push(...textBlock('t', 'a', 'b'));
    for await (const part of stream) {
      void part;
      break;
    }
    await gate.cancelled;
    expect(gate.model.doStreamCalls[0]!.abortSignal!.aborted).to.equal(true);
  });

  it('a stream is read once; the trace id comes from the response headers', async () => {
    const model = modelWith(async () => ({ stream: new ReadableStream({ start: (c) => (c.enqueue(finish()), c.close()) }), response: { headers: { 'X-Trace-Id': 'trace-1' } } }));
    const stream = await aiSdkProvider(model).generate('', [], GO);
    expect(stream.traceId).to.equal('trace-1');
    await collect(stream);
    expect(() => stream[Symbol.asyncIterator]()).to.throw(ChatProviderError, /read only once/);
  });

  it('usage of the v3 spec maps as v4 does', async () => {
    const stream = await aiSdkProvider(modelV3([{ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE }] as never)).generate('', [], GO);
    await collect(stream);
    expect(stream.usage).to.deep.equal({ inputOther: 70, inputCacheRead: 20, inputCacheCreation: 10, output: 30 });
  });
});

async function until(condition: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
