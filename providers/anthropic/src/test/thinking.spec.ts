import type { ThinkingEffort } from '@kosong/core';
import { expect } from 'chai';

import { clampEffort, supportsAdaptiveThinking, supportsEffortParameter } from '../index.js';

describe('Anthropic model capabilities (kosong spec §10 tests 72–74)', () => {
  it('adaptive thinking: Opus / Sonnet / Haiku 4.6 and later, and Mythos, whatever the prefix or suffix', () => {
    const yes = [
      'claude-opus-4-7', 'claude-opus-4-7-20260301', 'claude-opus-4.7', 'CLAUDE-OPUS-4-7', 'claude-opus-4-6', 'claude-opus-4-6-20260205',
      'claude-opus-4.6', 'claude-sonnet-4-6', 'claude-sonnet-4-6-20260301', 'claude-sonnet-4.6', 'claude-mythos-preview', 'claude-mythos',
      'claude-opus-4-8', 'claude-opus-4-9', 'claude-opus-4-10', 'claude-opus-5-0', 'claude-opus-5-0-20270101', 'claude-sonnet-5-0',
      'claude-haiku-4-6', 'claude-haiku-5-0', 'anthropic.claude-opus-4-7-v1:0', 'aws/claude-opus-4-7', 'bedrock/anthropic.claude-opus-4-6-v1:0',
      'claude-opus-4-7@20260101',
      // beyond the Python original: no minor version, and the newer families
      'claude-sonnet-5', 'claude-opus-5', 'claude-fable-5-2', 'claude-mythos-5-1',
    ];
    const no = [
      'claude-opus-4', 'claude-opus-4-0', 'claude-opus-4-5', 'claude-opus-4-5-20251001', 'claude-opus-3-5', 'claude-opus-3-5-sonnet-20241022',
      'claude-sonnet-4-20250514', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-sonnet-3-5', 'claude-sonnet-3-7', 'claude-haiku-3-5',
      'claude-haiku-4-5', 'claude-haiku-4-5-20251001', 'gpt-4', 'gpt-4-turbo', 'gemini-2.5-pro', '', 'unknown-model', 'claude',
      'claude-3-5-sonnet-20240620', 'claude-sonnet-4-20250514', 'claude-opus-4-20250514', 'claude-3-opus-20240229',
    ];
    expect(yes.filter((model) => !supportsAdaptiveThinking(model))).to.deep.equal([]);
    expect(no.filter((model) => supportsAdaptiveThinking(model))).to.deep.equal([]);
  });

  it('the effort parameter: adaptive models and Opus 4.5', () => {
    const yes = [
      'claude-opus-4-7', 'claude-opus-4-7-20260301', 'claude-opus-4-6', 'claude-opus-4-6-20260205', 'claude-sonnet-4-6', 'claude-mythos-preview',
      'claude-opus-5-0', 'claude-opus-4-5', 'claude-opus-4-5-20251001', 'claude-opus-4.5', 'anthropic.claude-opus-4-5-v1:0',
    ];
    const no = [
      'claude-sonnet-4-20250514', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5', 'claude-haiku-4-5-20251001', 'claude-sonnet-3-7',
      'claude-sonnet-3-7-20250219', 'claude-sonnet-3-5', 'claude-opus-3-5', 'claude-haiku-3-5', 'claude-3-opus-20240229', 'claude-3-5-sonnet-20240620',
      'claude-3-5-haiku-20241022', 'anthropic.claude-3-5-sonnet-20240620-v1:0', 'gpt-4', '', 'claude-2.1',
    ];
    expect(yes.filter((model) => !supportsEffortParameter(model))).to.deep.equal([]);
    expect(no.filter((model) => supportsEffortParameter(model))).to.deep.equal([]);
  });

  it('clamps each effort to what the model has', () => {
    const table: readonly [string, ThinkingEffort, ThinkingEffort][] = [
      ['opus-4-7', 'low', 'low'], ['opus-4-7', 'medium', 'medium'], ['opus-4-7', 'high', 'high'], ['opus-4-7', 'xhigh', 'xhigh'], ['opus-4-7', 'max', 'max'],
      ['opus-4-7-20260301', 'xhigh', 'xhigh'], ['opus-4-6', 'max', 'max'], ['opus-4-6', 'xhigh', 'high'], ['opus-4-6-20260205', 'max', 'max'],
      ['sonnet-4-6', 'max', 'max'], ['sonnet-4-6', 'xhigh', 'high'], ['mythos-preview', 'max', 'max'], ['mythos-preview', 'xhigh', 'high'],
      ['opus-4-5', 'max', 'high'], ['opus-4-5', 'xhigh', 'high'], ['opus-4-5', 'high', 'high'], ['sonnet-4-20250514', 'max', 'high'],
      ['sonnet-4-20250514', 'xhigh', 'high'], ['sonnet-4-20250514', 'low', 'low'], ['sonnet-4-5', 'xhigh', 'high'], ['haiku-4-5', 'max', 'high'],
      ['opus-4-6', 'medium', 'medium'], ['opus-4-8', 'xhigh', 'high'], ['opus-4-8', 'max', 'max'], ['opus-5-0', 'max', 'max'], ['opus-5-0', 'xhigh', 'high'],
      ['sonnet-4-5', 'off', 'off'],
    ];
    const wrong = table.filter(([model, effort, expected]) => clampEffort(`claude-${model}`, effort) !== expected);
    expect(wrong).to.deep.equal([]);
  });
});
