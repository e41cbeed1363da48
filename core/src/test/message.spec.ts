import { expect } from 'chai';

import {
  audioURLPart,
  createMessage,
  extractText,
  imageURLPart,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  videoURLPart,
  type ContentPart,
  type StreamedMessagePart,
  type ThinkPart,
  type ToolCall,
  type ToolCallPart,
} from '../index.js';
import { freezePart } from '../runtime/index.js';
import { isContentPart, mergePart } from '../provider-kit/index.js';

/** Freezes a value and everything reachable from it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/** Merges and fails the test when the two parts do not merge. */
function merged<T extends StreamedMessagePart>(pending: StreamedMessagePart, next: StreamedMessagePart): T {
  const result = mergePart(pending, next);
  expect(result, `expected ${JSON.stringify(pending)} and ${JSON.stringify(next)} to merge`).to.not.equal(undefined);
  return result as T;
}

/** Folds a stream the way generate() does (greedy, with the pending part only) and returns the flushed parts. */
function fold(parts: readonly StreamedMessagePart[]): StreamedMessagePart[] {
  const out: StreamedMessagePart[] = [];
  let pending: StreamedMessagePart | undefined;
  for (const part of parts) {
    const result = pending === undefined ? undefined : mergePart(pending, part);
    if (result !== undefined) {
      pending = result;
    } else {
      if (pending !== undefined) out.push(pending);
      pending = part;
    }
  }
  if (pending !== undefined) out.push(pending);
  return out;
}

describe('message model', () => {
  describe('mergePart', () => {
    describe('text + text', () => {
      it('concatenates the texts into one text part', () => {
        expect(mergePart(textPart('Hello, '), textPart('world'))).to.deep.equal({ type: 'text', text: 'Hello, world' });
      });

      it('merges an empty text part (appending nothing)', () => {
        expect(mergePart(textPart('abc'), textPart(''))).to.deep.equal({ type: 'text', text: 'abc' });
        expect(mergePart(textPart(''), textPart('abc'))).to.deep.equal({ type: 'text', text: 'abc' });
        expect(mergePart(textPart(''), textPart(''))).to.deep.equal({ type: 'text', text: '' });
      });
    });

    describe('think + think', () => {
      it('concatenates unsigned think parts and adds no signature', () => {
        const result = merged<ThinkPart>(thinkPart('I think '), thinkPart('therefore'));
        expect(result).to.deep.equal({ type: 'think', think: 'I think therefore' });
        expect(result).to.not.have.property('encrypted');
      });

      it('does not merge a think part into one that already carries a signature', () => {
        expect(mergePart(thinkPart('done', 'sig-1'), thinkPart('more'))).to.equal(undefined);
        expect(mergePart(thinkPart('done', 'sig-1'), thinkPart('', 'sig-2'))).to.equal(undefined);
      });

      it('takes over the signature of the next think part, which closes the merged part', () => {
        const signed = merged<ThinkPart>(thinkPart('reasoning'), thinkPart('', 'sig'));
        expect(signed).to.deep.equal({ type: 'think', think: 'reasoning', encrypted: 'sig' });
        expect(mergePart(signed, thinkPart('next thought'))).to.equal(undefined);
      });

      it('keeps the text of a signed next part as well as its signature', () => {
        expect(mergePart(thinkPart('a'), thinkPart('b', 'sig'))).to.deep.equal({ type: 'think', think: 'ab', encrypted: 'sig' });
      });

      it("treats encrypted: '' as no signature", () => {
        // On the pending part: it stays open.
        const open = merged<ThinkPart>(thinkPart('a', ''), thinkPart('b'));
        expect(open.think).to.equal('ab');
        expect(Boolean(open.encrypted), 'merged part must still be unsigned').to.equal(false);
        expect(merged<ThinkPart>(open, thinkPart('c')).think).to.equal('abc');

        // On the next part: it is not taken over, so the merged part stays open.
        const stillOpen = merged<ThinkPart>(thinkPart('a'), thinkPart('b', ''));
        expect(stillOpen.think).to.equal('ab');
        expect(Boolean(stillOpen.encrypted)).to.equal(false);
        expect(mergePart(stillOpen, thinkPart('c'))).to.deep.equal({ type: 'think', think: 'abc' });
      });

      it('starts a new part after a signature (Anthropic signature_delta sequence)', () => {
        const parts = fold([thinkPart('one '), thinkPart('two'), thinkPart('', 'sig-a'), thinkPart('three'), thinkPart('', 'sig-b')]);
        expect(parts).to.deep.equal([
          { type: 'think', think: 'one two', encrypted: 'sig-a' },
          { type: 'think', think: 'three', encrypted: 'sig-b' },
        ]);
      });
    });

    describe('tool call + tool-call parts', () => {
      it('keeps null arguments when the first fragment is null', () => {
        const result = merged<ToolCall>(toolCall('c1', 'f', null), toolCallPart(null));
        expect(result.function.arguments).to.equal(null);
      });

      it('takes the first fragment as the arguments when they were null, then appends', () => {
        const first = merged<ToolCall>(toolCall('c1', 'f', null), toolCallPart('{'));
        expect(first.function.arguments).to.equal('{');
        const second = merged<ToolCall>(first, toolCallPart('"a":1}'));
        expect(second.function.arguments).to.equal('{"a":1}');
      });

      it('appends to existing arguments, and a null fragment adds nothing', () => {
        expect(merged<ToolCall>(toolCall('c1', 'f', '{"a"'), toolCallPart(':1}')).function.arguments).to.equal('{"a":1}');
        expect(merged<ToolCall>(toolCall('c1', 'f', '{}'), toolCallPart(null)).function.arguments).to.equal('{}');
        expect(merged<ToolCall>(toolCall('c1', 'f', ''), toolCallPart(null)).function.arguments).to.equal('');
        expect(merged<ToolCall>(toolCall('c1', 'f', ''), toolCallPart('')).function.arguments).to.equal('');
      });

      it('keeps id, name, type and extras of the call', () => {
        const call = toolCall('get_weather#123', 'get_weather', null, { thought_signature: 'xyz', n: [1, { a: null }] });
        const result = merged<ToolCall>(call, toolCallPart('{}'));
        expect(result).to.deep.equal({
          type: 'function',
          id: 'get_weather#123',
          function: { name: 'get_weather', arguments: '{}' },
          extras: { thought_signature: 'xyz', n: [1, { a: null }] },
        });
      });

      it('does not add an extras key to a call without one', () => {
        expect(merged<ToolCall>(toolCall('c1', 'f', null), toolCallPart('{}'))).to.not.have.property('extras');
      });

      it('reproduces the generate() worked example (spec §3)', () => {
        const parts = fold([
          textPart('Hello, '),
          textPart('world'),
          textPart('!'),
          imageURLPart('https://example.com/image.png'),
          textPart('Another text.'),
          textPart(''),
          toolCall('get_weather#123', 'get_weather', null),
          toolCallPart('{'),
          toolCallPart('"city":'),
          toolCallPart('"Beijing"'),
          toolCallPart('}'),
          toolCallPart(null),
        ]);
        expect(parts).to.deep.equal([
          textPart('Hello, world!'),
          imageURLPart('https://example.com/image.png'),
          textPart('Another text.'),
          toolCall('get_weather#123', 'get_weather', '{"city":"Beijing"}'),
        ]);
      });
    });

    describe('tool-call part + tool-call part (orphan run)', () => {
      const cases: ReadonlyArray<[string | null, string | null, string | null]> = [
        [null, null, null],
        [null, 'a', 'a'],
        ['a', null, 'a'],
        ['a', 'b', 'ab'],
        ['', null, ''],
      ];
      for (const [first, second, expected] of cases) {
        it(`${JSON.stringify(first)} + ${JSON.stringify(second)} → ${JSON.stringify(expected)}`, () => {
          expect(mergePart(toolCallPart(first), toolCallPart(second))).to.deep.equal({ type: 'tool_call_part', argumentsPart: expected });
        });
      }

      it('accumulates a run that follows a text part, separately from the text', () => {
        expect(fold([textPart('t'), toolCallPart('{'), toolCallPart('}')])).to.deep.equal([textPart('t'), toolCallPart('{}')]);
      });
    });

    describe('nothing else merges', () => {
      const image = imageURLPart('https://example.com/a.png');
      const audio = audioURLPart('https://example.com/a.mp3');
      const video = videoURLPart('https://example.com/a.mp4');
      const text = textPart('text');
      const think = thinkPart('think');
      const call = toolCall('c1', 'f', '{}');
      const fragment = toolCallPart('x');
      const pairs: ReadonlyArray<[string, StreamedMessagePart, StreamedMessagePart]> = [
        ['image + image', image, image],
        ['audio + audio', audio, audio],
        ['video + video', video, video],
        ['image + audio', image, audio],
        ['text + think', text, think],
        ['think + text', think, text],
        ['text + image', text, image],
        ['image + text', image, text],
        ['think + image', think, image],
        ['text + tool call', text, call],
        ['tool call + text', call, text],
        ['tool call + think', call, think],
        ['tool call + image', call, image],
        ['tool call + tool call', call, toolCall('c2', 'g', '{}')],
        ['tool-call part + tool call', fragment, call],
        ['tool-call part + text', fragment, text],
        ['text + tool-call part', text, fragment],
        ['think + tool-call part', think, fragment],
        ['image + tool-call part', image, fragment],
      ];
      for (const [name, pending, next] of pairs) {
        it(`${name} → undefined`, () => {
          expect(mergePart(pending, next)).to.equal(undefined);
        });
      }
    });

    describe('purity', () => {
      const pairs: ReadonlyArray<[string, () => [StreamedMessagePart, StreamedMessagePart]]> = [
        ['text + text', () => [textPart('a'), textPart('b')]],
        ['think + think', () => [thinkPart('a'), thinkPart('b')]],
        ['think + signed think', () => [thinkPart('a'), thinkPart('', 'sig')]],
        ['signed think + think', () => [thinkPart('a', 'sig'), thinkPart('b')]],
        ['tool call (null) + fragment', () => [toolCall('c', 'f', null), toolCallPart('{')]],
        ['tool call + fragment', () => [toolCall('c', 'f', '{', { k: { deep: [1] } }), toolCallPart('}')]],
        ['tool call + null fragment', () => [toolCall('c', 'f', '{}'), toolCallPart(null)]],
        ['fragment + fragment', () => [toolCallPart('a'), toolCallPart('b')]],
        ['image + image', () => [imageURLPart('u', 'i'), imageURLPart('v')]],
      ];
      for (const [name, make] of pairs) {
        it(`does not mutate deep-frozen arguments: ${name}`, () => {
          const [pending, next] = make();
          const before = structuredClone([pending, next]);
          deepFreeze(pending);
          deepFreeze(next);
          const result = mergePart(pending, next);
          expect([pending, next]).to.deep.equal(before);
          if (result !== undefined) {
            // A merge that adds nothing (a null fragment) may return the pending part itself: parts are values.
            if (result === pending) expect(result).to.deep.equal(before[0]);
            expect(result).to.not.equal(next);
          }
        });
      }

      it('returns a new function body for a merged tool call, leaving the original call intact', () => {
        const call = freezePart(toolCall('c', 'f', '{')) as ToolCall;
        const result = merged<ToolCall>(call, toolCallPart('}'));
        expect(result.function).to.not.equal(call.function);
        expect(call.function.arguments).to.equal('{');
        expect(result.function.arguments).to.equal('{}');
      });

      it('lets a later merge leave an earlier result untouched', () => {
        const first = merged<ToolCallPart>(toolCallPart('a'), toolCallPart('b'));
        const second = merged<ToolCallPart>(first, toolCallPart('c'));
        expect(first.argumentsPart).to.equal('ab');
        expect(second.argumentsPart).to.equal('abc');
      });
    });
  });

  describe('part builders', () => {
    it('build parts without absent optional keys', () => {
      expect(thinkPart('t')).to.deep.equal({ type: 'think', think: 't' });
      expect(thinkPart('t')).to.not.have.property('encrypted');
      expect(thinkPart('t', 's')).to.deep.equal({ type: 'think', think: 't', encrypted: 's' });
      expect(imageURLPart('u')).to.deep.equal({ type: 'image_url', imageUrl: { url: 'u' } });
      expect(imageURLPart('u').imageUrl).to.not.have.property('id');
      expect(audioURLPart('u', 'a1')).to.deep.equal({ type: 'audio_url', audioUrl: { url: 'u', id: 'a1' } });
      expect(videoURLPart('u', 'v1')).to.deep.equal({ type: 'video_url', videoUrl: { url: 'u', id: 'v1' } });
      expect(toolCall('c', 'f', null)).to.deep.equal({ type: 'function', id: 'c', function: { name: 'f', arguments: null } });
      expect(toolCall('c', 'f', null)).to.not.have.property('extras');
      expect(toolCallPart(null)).to.deep.equal({ type: 'tool_call_part', argumentsPart: null });
    });

    it('isContentPart tells content from tool calls and fragments', () => {
      expect([textPart('a'), thinkPart('b'), imageURLPart('u'), audioURLPart('u'), videoURLPart('u')].every(isContentPart)).to.equal(true);
      expect(isContentPart(toolCall('c', 'f', null))).to.equal(false);
      expect(isContentPart(toolCallPart(null))).to.equal(false);
    });
  });

  describe('createMessage', () => {
    it('turns a string content into one text part', () => {
      const message = createMessage('user', 'Hello, world!');
      expect(message).to.deep.equal({ role: 'user', content: [{ type: 'text', text: 'Hello, world!' }] });
      expect(Object.keys(message)).to.deep.equal(['role', 'content']);
    });

    it('turns an empty string into one empty text part', () => {
      expect(createMessage('assistant', '').content).to.deep.equal([{ type: 'text', text: '' }]);
    });

    it('wraps a single part in a list', () => {
      const image = imageURLPart('https://example.com/image.png');
      expect(createMessage('assistant', image).content).to.deep.equal([image]);
    });

    it('takes a list of parts as given, including an empty one', () => {
      const parts: ContentPart[] = [textPart('a'), thinkPart('b')];
      expect(createMessage('assistant', parts).content).to.equal(parts);
      expect(createMessage('assistant', []).content).to.deep.equal([]);
    });

    it('adds the extras', () => {
      const call = toolCall('c1', 'f', '{}');
      expect(createMessage('assistant', [], { toolCalls: [call], name: 'bot', partial: true })).to.deep.equal({
        role: 'assistant',
        content: [],
        toolCalls: [call],
        name: 'bot',
        partial: true,
      });
      expect(createMessage('tool', 'ok', { toolCallId: 'c1' })).to.deep.equal({ role: 'tool', content: [textPart('ok')], toolCallId: 'c1' });
    });
  });

  describe('extractText', () => {
    const message = createMessage('assistant', [
      textPart('Hello, '),
      textPart('world'),
      imageURLPart('https://example.com/image.png'),
      textPart('!'),
      thinkPart('This is a thought.'),
    ]);

    it('joins the text parts, skipping media and think parts (spec test 11)', () => {
      expect(extractText(message)).to.equal('Hello, world!');
    });

    it('joins with a separator (spec test 11)', () => {
      expect(extractText(message, '\n')).to.equal('Hello, \nworld\n!');
    });

    it('does not trim, and gives an empty string without text parts', () => {
      expect(extractText(createMessage('user', '  padded \n'))).to.equal('  padded \n');
      expect(extractText(createMessage('assistant', [thinkPart('only thinking'), imageURLPart('u')]), '\n')).to.equal('');
      expect(extractText(createMessage('assistant', []))).to.equal('');
    });
  });
});
