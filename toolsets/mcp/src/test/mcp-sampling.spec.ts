/**
 * Sampling answered by a kosong provider (unit level; the end-to-end path is in
 * mcp-everything.spec.ts): the approval decides, the request's options reach the provider, and
 * every refusal or failure is an MCP error the server gets.
 */
import { expect } from 'chai';
import { APIConnectionError, textPart, type ApprovalRequest } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { McpError, type CreateMessageRequest } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SAMPLING_APPROVAL_TOOL, MCP_SAMPLING_REFUSED_CODE, samplingApprovalThrough, samplingHistory } from '../index.js';
import { answerSampling } from '../mcp-sampling.js';

const params: CreateMessageRequest['params'] = {
  systemPrompt: 'Be brief.',
  maxTokens: 200,
  temperature: 0.3,
  stopSequences: ['END'],
  messages: [
    { role: 'user', content: { type: 'text', text: 'What is this?' } },
    { role: 'user', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
    { role: 'assistant', content: [{ type: 'text', text: 'A dot.' }, { type: 'audio', data: 'BBBB', mimeType: 'audio/wav' }] },
  ],
};

async function refusal(run: () => Promise<unknown>): Promise<McpError> {
  try {
    await run();
  } catch (error) {
    expect(error).to.be.instanceOf(McpError);
    return error as McpError;
  }
  return expect.fail('the request was answered');
}

describe('sampling through a kosong provider', () => {
  const signal = new AbortController().signal;

  it('samplingHistory: text, image and audio blocks, single or in lists, with their roles', () => {
    const history = samplingHistory(params);
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'user', 'assistant']);
    expect(history[0]!.content).to.deep.equal([textPart('What is this?')]);
    expect(history[1]!.content).to.deep.equal([{ type: 'image_url', imageUrl: { url: 'data:image/png;base64,AAAA' } }]);
    expect(history[2]!.content).to.deep.equal([textPart('A dot.'), { type: 'audio_url', audioUrl: { url: 'data:audio/wav;base64,BBBB' } }]);
    const odd = samplingHistory({ maxTokens: 1, messages: [{ role: 'user', content: { type: 'tool_result', toolUseId: 't', content: [] } }] } as never);
    expect(odd[0]!.content).to.deep.equal([textPart('[Unsupported content: tool_result]')]);
  });

  it('approved: the provider runs with the system prompt, history, maxTokens (capped), temperature and stop sequences', async () => {
    const provider = new MockChatProvider([textPart('A red dot.')], { finishReason: 'length' });
    let seen: unknown;
    const result = await answerSampling('srv', { provider, approve: (request) => ((seen = request), true), maxTokens: 100 }, params, signal);
    expect(result).to.deep.equal({ role: 'assistant', content: { type: 'text', text: 'A red dot.' }, model: 'mock', stopReason: 'maxTokens' });
    expect(provider.requests.at(-1)).to.deep.include({ systemPrompt: 'Be brief.', historyLength: 3 });
    expect(provider.requests.at(-1)!.generation).to.deep.equal({ maxOutputTokens: 100, temperature: 0.3, stopSequences: ['END'] });
    expect(seen).to.deep.include({ server: 'srv', params, signal });
  });

  it('stop reasons: stop → endTurn; none → no stopReason', async () => {
    const stopped = await answerSampling('srv', { provider: new MockChatProvider([textPart('ok')], { finishReason: 'stop' }), approve: () => true }, params, signal);
    expect(stopped.stopReason).to.equal('endTurn');
    const unsaid = await answerSampling('srv', { provider: new MockChatProvider([textPart('ok')]), approve: () => true }, params, signal);
    expect(unsaid).not.to.have.property('stopReason');
  });

  it('refused: no approve, false, a non-true answer or a throw; the provider is never called', async () => {
    const provider = new MockChatProvider([textPart('never')]);
    const none = await refusal(() => answerSampling('srv', { provider }, params, signal));
    expect(none.code).to.equal(MCP_SAMPLING_REFUSED_CODE);
    expect(none.message).to.contain('no approval handler (sampling.approve) is set for MCP server "srv"');
    expect((await refusal(() => answerSampling('srv', { provider, approve: () => false }, params, signal))).message).to.contain('(not approved)');
    expect((await refusal(() => answerSampling('srv', { provider, approve: () => 'yes' as never }, params, signal))).message).to.contain('(not approved)');
    const threw = await refusal(() =>
      answerSampling('srv', { provider, approve: () => Promise.reject(new Error('approval service down')) }, params, signal),
    );
    expect(threw.message).to.contain('its approval handler failed: approval service down');
    expect(provider.requests).to.have.length(0);
  });

  it("a failing provider is an MCP internal error naming the failure; a bad option (temperature 5) too", async () => {
    const failing = new MockChatProvider([], { generateError: new APIConnectionError('reset') });
    const failed = await refusal(() => answerSampling('srv', { provider: failing, approve: () => true }, params, signal));
    expect(failed.code).to.equal(-32603);
    expect(failed.message).to.contain("the client's model failed").and.contain('reset');
    const hot = await refusal(() => answerSampling('srv', { provider: new MockChatProvider([textPart('x')]), approve: () => true }, { ...params, temperature: 5 }, signal));
    expect(hot.code).to.equal(-32603);
  });
});

describe('samplingApprovalThrough (sampling approvals by the app approval handler)', () => {
  const request = { server: 'srv', params, history: samplingHistory(params), signal: new AbortController().signal };

  it('shows the handler an mcp_sampling call with the server, system prompt, maxTokens and message texts', async () => {
    const seen: ApprovalRequest[] = [];
    const approve = samplingApprovalThrough({ decide: (r) => (seen.push(r), { type: 'approve' }) }, { tenant: 'acme' });
    expect(await approve(request)).to.equal(true);
    expect(seen).to.have.length(1);
    expect(seen[0]!.toolCall.function.name).to.equal(MCP_SAMPLING_APPROVAL_TOOL);
    expect(JSON.parse(seen[0]!.toolCall.function.arguments!)).to.deep.equal({
      server: 'srv',
      systemPrompt: 'Be brief.',
      maxTokens: 200,
      messages: [
        { role: 'user', text: 'What is this?' },
        { role: 'user', text: '' },
        { role: 'assistant', text: 'A dot.' },
      ],
    });
    expect(seen[0]).to.deep.include({ tenant: 'acme', index: 0, signal: request.signal });
  });

  it('deny and defer refuse; a function of the onApproval shape works too', async () => {
    expect(await samplingApprovalThrough(() => ({ type: 'deny', reason: 'no' }))(request)).to.equal(false);
    expect(await samplingApprovalThrough(() => ({ type: 'defer' }))(request)).to.equal(false);
    expect(await samplingApprovalThrough(async () => ({ type: 'approve' }))(request)).to.equal(true);
  });
});
