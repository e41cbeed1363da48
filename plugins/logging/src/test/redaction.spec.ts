import { APIStatusError, definePlugin, textPart, toolCall, toolCallPart, toolError, toolOk, type ToolCall, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { pino } from 'pino';
import { loggingPlugin, MAX_CONTENT_LENGTH, REDACTED, StepLogger } from '../index.js';
import { expectNoSecret, fastRetry, kernelWith, MemoryDestination, providerPlugin, sequenceProvider, toolsetPlugin } from './support.js';

const API_KEY = 'sk-live-4f9a2b7c1d8e6f3a0b5c';
/** A secret with characters JSON escapes, to catch a scrub that only knows the raw form. */
const ODD_SECRET = 'pa"ss\\word/ü+1';
const base = { systemPrompt: 'hi', history: [{ role: 'user' as const, content: [textPart('go')] }] };

/** An OpenAI-style authentication failure carrying the key in its message, its cause and its headers. */
function authenticationError(): APIStatusError {
  const cause = new Error(`POST /v1/chat/completions failed; request headers: {"Authorization":"Bearer ${API_KEY}","Content-Type":"application/json"}`);
  const error = new APIStatusError(401, `Incorrect API key provided: ${API_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`, {
    requestId: 'req_8c1f',
    cause,
  });
  return Object.assign(error, {
    headers: { authorization: `Bearer ${API_KEY}`, 'x-request-id': 'req_8c1f' },
    request: { url: `https://api.example.com/v1?key=${encodeURIComponent(ODD_SECRET)}`, config: { apiKey: 'not-configured-but-sensitive' } },
  });
}

/** Tools that get, return and fail with the secret. */
const leakyTools: Toolset = {
  tools: [],
  handle(call: ToolCall) {
    if (call.function.name === 'login') {
      return { toolCallId: call.id, returnValue: toolError({ message: `login rejected for key ${API_KEY} (expired)`, brief: 'Rejected' }) };
    }
    if (call.function.name === 'long') {
      // The secret straddles the cut: scrubbing after cutting would leave its first characters.
      return { toolCallId: call.id, returnValue: toolOk({ output: `${'x'.repeat(MAX_CONTENT_LENGTH - 6)}${API_KEY} tail` }) };
    }
    return { toolCallId: call.id, returnValue: toolOk({ output: [textPart(`config: OPENAI_API_KEY=${API_KEY}; password=${ODD_SECRET}`)] }) };
  },
};

describe('loggingPlugin: redaction', () => {
  it('never logs a configured secret from a provider error (message, cause, headers, stack) and keeps the rest', async () => {
    const destination = new MemoryDestination();
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider([], { generateError: authenticationError() })),
      loggingPlugin({ destination, level: 'trace', secrets: [API_KEY, ODD_SECRET] }),
    );
    await kernel.runner().step(base).catch(() => undefined);
    await kernel.dispose();

    expectNoSecret(destination, API_KEY);
    expectNoSecret(destination, ODD_SECRET);
    const error = destination.only('step.end')['error'] as Record<string, Record<string, unknown>>;
    expect(error).to.deep.include({
      name: 'APIStatusError',
      message: `Incorrect API key provided: ${REDACTED}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      statusCode: 401,
      requestId: 'req_8c1f',
      headers: { authorization: REDACTED, 'x-request-id': 'req_8c1f' },
    });
    expect(error['cause']!['message']).to.equal(
      `POST /v1/chat/completions failed; request headers: {"Authorization":"Bearer ${REDACTED}","Content-Type":"application/json"}`,
    );
    expect(error['stack']).to.include(`Incorrect API key provided: ${REDACTED}`);
    expect(error['cause']!['stack']).to.include(`Bearer ${REDACTED}`);
    expect(error['request']).to.deep.equal({ url: `https://api.example.com/v1?key=${REDACTED}`, config: { apiKey: REDACTED } });
  });

  it('never logs a secret from tool arguments, output or error messages, even where content is cut', async () => {
    const destination = new MemoryDestination();
    const parts = [
      toolCall('a', 'configure', `{"apiKey":"${API_KEY}","note":${JSON.stringify(ODD_SECRET)}}`),
      toolCall('b', 'login', '{"key":"sk-live-'),
      toolCallPart('4f9a2b7c1d8e6f3a0b5c"}'), // the secret split across streamed parts
      toolCall('c', 'long', '{}'),
    ];
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider(parts)),
      toolsetPlugin(leakyTools),
      loggingPlugin({ destination, level: 'trace', secrets: [API_KEY, ODD_SECRET], logContent: true, logParts: true }),
    );
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();

    expectNoSecret(destination, API_KEY);
    expectNoSecret(destination, ODD_SECRET);
    // No prefix of the key either (a secret cut in half by truncation or by the stream).
    for (const raw of destination.raw) expect(raw).not.to.include(API_KEY.slice(0, 10));
    const calls = new Map(destination.events('tool.call').map((l) => [l['toolCallId'], l]));
    expect(calls.get('a')!['arguments']).to.equal(`{"apiKey":"${REDACTED}","note":"${REDACTED}"}`);
    expect(calls.get('b')!['arguments']).to.equal(`{"key":"${REDACTED}"}`);
    const results = new Map(destination.events('tool.result').map((l) => [l['toolCallId'], l]));
    expect(results.get('a')!['output']).to.equal(`config: OPENAI_API_KEY=${REDACTED}; password=${REDACTED}`);
    expect(results.get('b')).to.include({ isError: true, message: `login rejected for key ${REDACTED} (expired)` });
    expect(results.get('c')!['output']).to.match(/^x{1994}\[REDAC…/); // scrubbed, then cut
  });

  it('never logs a secret \\u-escaped in tool arguments, or in a URLSearchParams or lowercase-%xx form in tool output', async () => {
    const destination = new MemoryDestination();
    const escapedFirst = `\\u${API_KEY.charCodeAt(0).toString(16).padStart(4, '0')}${API_KEY.slice(1)}`; // \u0073k-live-…
    const allEscaped = [...API_KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join('');
    const query = new URLSearchParams({ key: ODD_SECRET, token: API_KEY }).toString();
    const lowercase = encodeURIComponent(ODD_SECRET).toLowerCase();
    const echo: Toolset = {
      tools: [],
      handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `GET /v1?${query} then /v2?k=${lowercase}` }) }),
    };
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider([toolCall('a', 'configure', `{"apiKey":"${escapedFirst}","again":"${allEscaped}"}`)])),
      toolsetPlugin(echo),
      loggingPlugin({ destination, level: 'trace', secrets: [API_KEY, ODD_SECRET], logContent: true }),
    );
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();

    expectNoSecret(destination, API_KEY);
    expectNoSecret(destination, ODD_SECRET);
    for (const raw of destination.raw) expect(raw).not.to.include(API_KEY.slice(1)).and.not.to.include(lowercase.slice(3));
    const args = destination.only('tool.call')['arguments'] as string;
    expect(JSON.parse(args)).to.deep.equal({ apiKey: REDACTED, again: REDACTED });
    const output = destination.only('tool.result')['output'] as string;
    expect(output).to.equal(`GET /v1?key=${REDACTED}&token=${REDACTED} then /v2?k=${REDACTED}`);
  });

  it('never logs a secret from a retry, a hook failure or an abort reason', async () => {
    const destination = new MemoryDestination();
    const tattler = definePlugin({
      name: 'tattler',
      setup: (ctx) =>
        ctx.bindHooks({
          onStepEnd: () => {
            throw new Error(`could not export span: token ${API_KEY} rejected`);
          },
        }),
    });
    const provider = sequenceProvider([{ error: new APIStatusError(429, `rate limited for ${API_KEY}`) }, [textPart('ok')]]);
    const kernel = await kernelWith(providerPlugin(provider), loggingPlugin({ destination, secrets: [API_KEY] }), tattler);
    await kernel.agent({ systemPrompt: 'hi', retry: fastRetry }).run('go');

    const controller = new AbortController();
    controller.abort(new Error(`cancelled: session ${API_KEY} revoked`));
    await kernel.runner().step({ ...base, signal: controller.signal }).catch(() => undefined);
    await kernel.dispose();

    expectNoSecret(destination, API_KEY);
    expect(destination.only('step.retry')['error']).to.include({ message: `rate limited for ${REDACTED}`, statusCode: 429 });
    const hookFailures = destination.events('hook.error');
    expect(hookFailures).to.have.lengthOf(3);
    for (const line of hookFailures) expect(line['error']).to.include({ message: `could not export span: token ${REDACTED} rejected` });
    const aborted = destination.events('step.end').at(-1)!;
    expect(aborted['error']).to.include({ message: `cancelled: session ${REDACTED} revoked` });
  });

  it("scrubs every line of a given pino logger's child, whatever added the secret (a mixin), without changing the logger", async () => {
    const destination = new MemoryDestination();
    const parent = pino({ mixin: () => ({ deployment: `eu-1 (key ${API_KEY})`, headers: { authorization: 'Basic dXNlcjpwYXNz' } }) }, destination);
    const kernel = await kernelWith(providerPlugin(new MockChatProvider([textPart('ok')])), loggingPlugin({ logger: parent, secrets: [API_KEY] }));
    await kernel.runner().step(base);
    await kernel.dispose();

    expectNoSecret(destination, API_KEY);
    const start = destination.only('step.start');
    expect(start).to.deep.include({ deployment: `eu-1 (key ${REDACTED})`, headers: { authorization: REDACTED } });
    expect(start).not.to.have.property('name'); // none added to a given logger
    expect((parent as unknown as Record<symbol, { streamWrite?: unknown }>)[Symbol.for('pino.hooks')]!.streamWrite).to.equal(undefined);
    expect(() => new StepLogger({ logger: { child: () => ({}) } as never, secrets: [API_KEY] })).to.throw(TypeError, /must be a pino logger/);
  });

  it('applies custom pino redact paths and redact keys (any depth), or none', async () => {
    const error = Object.assign(new Error('bad gateway'), { requestId: 'req-1', details: { session: { token: 'tok-1', password: 'hunter2' } } });
    const run = async (options: object): Promise<Record<string, unknown>> => {
      const destination = new MemoryDestination();
      const kernel = await kernelWith(providerPlugin(new MockChatProvider([], { generateError: error })), loggingPlugin({ destination, ...options }));
      await kernel.runner().step(base).catch(() => undefined);
      await kernel.dispose();
      return destination.only('step.end')['error'] as Record<string, unknown>;
    };
    expect(await run({})).to.deep.include({ requestId: 'req-1', details: { session: { token: 'tok-1', password: REDACTED } } });
    expect(await run({ redactPaths: ['error.requestId'], redactKeys: ['token'] })).to.deep.include({
      requestId: REDACTED,
      details: { session: { token: REDACTED, password: 'hunter2' } },
    });
  });
});
