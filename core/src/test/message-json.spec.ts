import { expect } from 'chai';
import fc from 'fast-check';

import {
  audioURLPart,
  createMessage,
  imageURLPart,
  messageFromJSON,
  messageToJSON,
  MessageValidationError,
  textPart,
  thinkPart,
  toolCall,
  videoURLPart,
  type ContentPart,
  type JsonObject,
  type JsonValue,
  type Message,
  type Role,
  type ToolCall,
} from '../index.js';

/** Serialises, goes through JSON text (as a JSONL line would), and reads back. */
function roundTrip(message: Message): Message {
  return messageFromJSON(JSON.parse(JSON.stringify(messageToJSON(message))));
}

/** Freezes a value and everything reachable from it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/** Runs `fn`, expecting a {@link MessageValidationError}, and returns it. */
function validationError(fn: () => unknown): MessageValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(MessageValidationError);
    expect(error).to.be.instanceOf(Error);
    return error as MessageValidationError;
  }
  expect.fail('expected a MessageValidationError');
}

const IMAGE = 'https://example.com/image.png';
const AUDIO = 'https://example.com/audio.mp3';
const VIDEO = 'https://example.com/video.mp4';

describe('message JSON', () => {
  describe('messageToJSON (Python kosong snapshots, spec §1.5 / test_message.py)', () => {
    it('1. a plain text message has a string content', () => {
      const message = createMessage('user', 'Hello, world!');
      expect(messageToJSON(message)).to.deep.equal({ role: 'user', content: 'Hello, world!' });
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('2. a single non-text part is a list, with "id": null', () => {
      const message = createMessage('assistant', imageURLPart(IMAGE));
      expect(messageToJSON(message)).to.deep.equal({
        role: 'assistant',
        content: [{ type: 'image_url', image_url: { url: IMAGE, id: null } }],
      });
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('3. one text part and a tool call: string content, tool_calls without extras', () => {
      const message = createMessage('assistant', [textPart('Hello, world!')], { toolCalls: [toolCall('123', 'function', '{}')] });
      expect(messageToJSON(message)).to.deep.equal({
        role: 'assistant',
        content: 'Hello, world!',
        tool_calls: [{ type: 'function', id: '123', function: { name: 'function', arguments: '{}' } }],
      });
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('4. an empty content is [] (not null, not omitted)', () => {
      const message = createMessage('assistant', [], { toolCalls: [toolCall('123', 'test_func', '{}')] });
      const json = messageToJSON(message);
      expect(json).to.have.property('content').that.deep.equals([]);
      expect(json).to.deep.equal({
        role: 'assistant',
        content: [],
        tool_calls: [{ type: 'function', id: '123', function: { name: 'test_func', arguments: '{}' } }],
      });
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('5. complex content: every part kind, null optional fields always present', () => {
      const message = createMessage(
        'user',
        [textPart('Hello, world!'), thinkPart('I think therefore I am.'), imageURLPart(IMAGE), audioURLPart(AUDIO), videoURLPart(VIDEO)],
        { toolCalls: [toolCall('123', 'function', '{}')] },
      );
      expect(messageToJSON(message)).to.deep.equal({
        role: 'user',
        content: [
          { type: 'text', text: 'Hello, world!' },
          { type: 'think', think: 'I think therefore I am.', encrypted: null },
          { type: 'image_url', image_url: { url: IMAGE, id: null } },
          { type: 'audio_url', audio_url: { url: AUDIO, id: null } },
          { type: 'video_url', video_url: { url: VIDEO, id: null } },
        ],
        tool_calls: [{ type: 'function', id: '123', function: { name: 'function', arguments: '{}' } }],
      });
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('10. the full (non exclude_none) Python dump reads back to the same message', () => {
      const plain = messageFromJSON({ role: 'assistant', name: null, content: [], tool_calls: null, tool_call_id: null, partial: null });
      expect(plain).to.deep.equal({ role: 'assistant', content: [] });
      expect(Object.keys(plain)).to.deep.equal(['role', 'content']);

      const withCall = messageFromJSON({
        role: 'assistant',
        name: null,
        content: [],
        tool_calls: [{ type: 'function', id: '123', function: { name: 'test_func', arguments: '{}' }, extras: null }],
        tool_call_id: null,
        partial: null,
      });
      expect(withCall).to.deep.equal(createMessage('assistant', [], { toolCalls: [toolCall('123', 'test_func', '{}')] }));
      expect(withCall.toolCalls![0]).to.not.have.property('extras');
    });

    it('writes fields in the Python order: role, name, content, tool_calls, tool_call_id, partial', () => {
      const message: Message = {
        partial: false,
        toolCallId: 'tc_1',
        toolCalls: [toolCall('tc_1', 'f', null, { sig: 'x' })],
        content: [thinkPart('t', 'enc'), imageURLPart(IMAGE, 'img-1')],
        name: 'bot',
        role: 'assistant',
      };
      expect(JSON.stringify(messageToJSON(message))).to.equal(
        '{"role":"assistant","name":"bot","content":[' +
          '{"type":"think","think":"t","encrypted":"enc"},' +
          `{"type":"image_url","image_url":{"url":"${IMAGE}","id":"img-1"}}],` +
          '"tool_calls":[{"type":"function","id":"tc_1","function":{"name":"f","arguments":null},"extras":{"sig":"x"}}],' +
          '"tool_call_id":"tc_1","partial":false}',
      );
    });

    it('produces the JSONL lines of a Python JsonlLinearStorage (spec §9)', () => {
      expect(JSON.stringify(messageToJSON(createMessage('user', 'abc')))).to.equal('{"role":"user","content":"abc"}');
      expect(JSON.stringify(messageToJSON(createMessage('assistant', 'def')))).to.equal('{"role":"assistant","content":"def"}');
    });

    it('keeps "arguments": null on a tool call', () => {
      const json = messageToJSON(createMessage('assistant', [], { toolCalls: [toolCall('c', 'f', null)] }));
      expect(json['tool_calls']).to.deep.equal([{ type: 'function', id: 'c', function: { name: 'f', arguments: null } }]);
    });

    it('writes a single empty text part as "" and a text run of two parts as a list', () => {
      expect(messageToJSON(createMessage('assistant', ''))).to.deep.equal({ role: 'assistant', content: '' });
      expect(messageToJSON(createMessage('assistant', [textPart('a'), textPart('b')]))).to.deep.equal({
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      });
    });

    it('writes a single think part as a list', () => {
      expect(messageToJSON(createMessage('assistant', thinkPart('hm')))['content']).to.deep.equal([
        { type: 'think', think: 'hm', encrypted: null },
      ]);
    });

    it('writes the message-level fields only when defined', () => {
      expect(messageToJSON(createMessage('tool', 'result', { toolCallId: 'c1' }))).to.deep.equal({
        role: 'tool',
        content: 'result',
        tool_call_id: 'c1',
      });
      expect(messageToJSON(createMessage('user', 'hi', { name: 'alice', partial: true }))).to.deep.equal({
        role: 'user',
        name: 'alice',
        content: 'hi',
        partial: true,
      });
      expect(messageToJSON(createMessage('assistant', [], { toolCalls: [] }))).to.deep.equal({ role: 'assistant', content: [], tool_calls: [] });
    });

    it('round-trips a "__proto__" key inside extras as plain data (found by the property test)', () => {
      const extras = JSON.parse('{"outer":{"__proto__":{"polluted":true}}}') as JsonObject;
      const message = createMessage('assistant', [], { toolCalls: [toolCall('c', 'f', null, extras)] });
      const back = messageFromJSON(JSON.parse(JSON.stringify(messageToJSON(message))));
      const outer = back.toolCalls![0]!.extras!['outer'] as Record<string, unknown>;
      expect(Object.keys(outer)).to.deep.equal(['__proto__']);
      expect(Object.getPrototypeOf(outer)).to.equal(Object.prototype);
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
    });

    it('copies extras, so the output does not alias the message', () => {
      const extras = { nested: { list: [1, 2] } };
      const json = messageToJSON(createMessage('assistant', [], { toolCalls: [toolCall('c', 'f', '{}', extras)] }));
      const written = (json['tool_calls'] as readonly JsonObject[])[0]!['extras'];
      expect(written).to.deep.equal(extras);
      expect(written).to.not.equal(extras);
      expect((written as JsonObject)['nested']).to.not.equal(extras.nested);
    });

    it('works on deep-frozen messages', () => {
      const message = createMessage('assistant', [thinkPart('t'), imageURLPart(IMAGE)], {
        toolCalls: [toolCall('c', 'f', '{}', { a: [1] })],
      });
      deepFreeze(message);
      expect(roundTrip(message)).to.deep.equal(message);
    });

    it('rejects something in content that is not a content part', () => {
      const bad = { role: 'assistant', content: [textPart('a'), toolCall('c', 'f', '{}')] } as unknown as Message;
      const error = validationError(() => messageToJSON(bad));
      expect(error.path).to.equal('$.content[1].type');
      expect(error.message).to.contain('$.content[1].type');
    });
  });

  describe('messageFromJSON (test_message.py 6–9)', () => {
    it('6. a string content becomes one text part', () => {
      expect(messageFromJSON({ role: 'user', content: 'Hello, world!' })).to.deep.equal({
        role: 'user',
        content: [{ type: 'text', text: 'Hello, world!' }],
      });
    });

    it('7. list content and tool calls become typed parts and calls', () => {
      const message = messageFromJSON({
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me do that.' }],
        tool_calls: [{ type: 'function', id: 'tc_123', function: { name: 'do_something', arguments: '{"x":1}' } }],
      });
      expect(message).to.deep.equal({
        role: 'assistant',
        content: [textPart('Let me do that.')],
        toolCalls: [toolCall('tc_123', 'do_something', '{"x":1}')],
      });
    });

    it('8. a null content becomes [] and the tool calls are read', () => {
      const message = messageFromJSON({
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', id: 'tc_1', function: { name: 'f', arguments: '{}' } }],
      });
      expect(message.content).to.deep.equal([]);
      expect(message.toolCalls).to.deep.equal([toolCall('tc_1', 'f', '{}')]);
    });

    it('9. list content without tool calls has no toolCalls', () => {
      const message = messageFromJSON({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] });
      expect(message).to.deep.equal({ role: 'assistant', content: [textPart('hi')] });
      expect(message).to.not.have.property('toolCalls');
    });

    it('reads the camelCase model of every part kind, dropping null ids and signatures', () => {
      const message = messageFromJSON({
        role: 'user',
        content: [
          { type: 'think', think: 'a', encrypted: null },
          { type: 'think', think: 'b', encrypted: 'sig' },
          { type: 'think', think: 'c' },
          { type: 'image_url', image_url: { url: IMAGE, id: null } },
          { type: 'image_url', image_url: { url: IMAGE, id: 'img' } },
          { type: 'audio_url', audio_url: { url: AUDIO } },
          { type: 'video_url', video_url: { url: VIDEO, id: 'vid' } },
        ],
      });
      expect(message.content).to.deep.equal([
        thinkPart('a'),
        thinkPart('b', 'sig'),
        thinkPart('c'),
        imageURLPart(IMAGE),
        imageURLPart(IMAGE, 'img'),
        audioURLPart(AUDIO),
        videoURLPart(VIDEO, 'vid'),
      ]);
      expect(message.content[0]).to.not.have.property('encrypted');
      expect((message.content[3] as { imageUrl: object }).imageUrl).to.not.have.property('id');
    });

    it('reads the message-level fields', () => {
      expect(messageFromJSON({ role: 'tool', name: 'n', content: 'ok', tool_call_id: 'c1', partial: true })).to.deep.equal({
        role: 'tool',
        content: [textPart('ok')],
        toolCallId: 'c1',
        name: 'n',
        partial: true,
      });
      expect(messageFromJSON({ role: 'assistant', content: 'x', partial: false }).partial).to.equal(false);
    });

    it('reads a tool call with extras, and one without "type" (Python default)', () => {
      const message = messageFromJSON({
        role: 'assistant',
        content: [],
        tool_calls: [
          { type: 'function', id: 'a', function: { name: 'f', arguments: null }, extras: { sig: 'x', n: [1.5, true, null, { k: 'v' }] } },
          { id: 'b', function: { name: 'g', arguments: '{}' } },
        ],
      });
      expect(message.toolCalls).to.deep.equal([
        toolCall('a', 'f', null, { sig: 'x', n: [1.5, true, null, { k: 'v' }] }),
        toolCall('b', 'g', '{}'),
      ]);
    });

    it('reads a tool call whose arguments were dropped by an exclude_none dump as arguments: null', () => {
      const message = messageFromJSON({ role: 'assistant', content: [], tool_calls: [{ type: 'function', id: 'a', function: { name: 'f' } }] });
      expect(message.toolCalls).to.deep.equal([toolCall('a', 'f', null)]);
    });

    it('ignores unknown keys, like pydantic', () => {
      const message = messageFromJSON({
        role: 'user',
        content: [{ type: 'text', text: 'a', extra: 1 }],
        unknown: true,
      });
      expect(message).to.deep.equal({ role: 'user', content: [textPart('a')] });
    });

    it('does not share objects with its input', () => {
      const extras = { deep: { a: 1 } };
      const input = { role: 'assistant', content: [], tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{}' }, extras }] };
      const message = messageFromJSON(input);
      expect(message.toolCalls![0]!.extras).to.deep.equal(extras);
      expect(message.toolCalls![0]!.extras).to.not.equal(extras);
    });
  });

  describe('round trips', () => {
    const call = toolCall('call_1', 'get_weather', '{"city":"Beijing"}');
    const cases: ReadonlyArray<[string, Message]> = [
      ['system text', createMessage('system', 'You are helpful.')],
      ['empty text', createMessage('user', '')],
      ['empty content', createMessage('assistant', [])],
      ['two text parts', createMessage('assistant', [textPart('a'), textPart('b')])],
      ['signed think + text', createMessage('assistant', [thinkPart('hm', 'sig'), textPart('answer')])],
      [
        'every part kind with ids and tool calls',
        createMessage(
          'assistant',
          [
            textPart('t'),
            thinkPart('th'),
            thinkPart('th2', 'enc'),
            imageURLPart(IMAGE, 'i1'),
            imageURLPart('data:image/png;base64,AAAA'),
            audioURLPart(AUDIO, 'a1'),
            videoURLPart(VIDEO),
          ],
          {
            toolCalls: [call, toolCall('call_2', 'noop', null), toolCall('call_3', 'x', '', { thought_signature: 'abc', list: [1, 'two', null] })],
            name: 'assistant-1',
            partial: true,
          },
        ),
      ],
      ['tool result', createMessage('tool', 'sunny', { toolCallId: 'call_1' })],
      ['unicode', createMessage('user', [textPart('héllo 👋 \u0000 "quoted" \n'), imageURLPart('https://例え.jp/画像.png')])],
    ];
    for (const [name, message] of cases) {
      it(name, () => {
        expect(roundTrip(message)).to.deep.equal(message);
      });
    }

    it('holds for arbitrary messages (property)', () => {
      const text = fc.string({ unit: 'grapheme' });
      const media = fc.record({ url: fc.string(), id: fc.string() }, { requiredKeys: ['url'] });
      const part: fc.Arbitrary<ContentPart> = fc.oneof(
        text.map((t) => textPart(t)),
        fc.record({ type: fc.constant('think' as const), think: text, encrypted: fc.string() }, { requiredKeys: ['type', 'think'] }),
        media.map((imageUrl) => ({ type: 'image_url' as const, imageUrl })),
        media.map((audioUrl) => ({ type: 'audio_url' as const, audioUrl })),
        media.map((videoUrl) => ({ type: 'video_url' as const, videoUrl })),
      );
      // Through JSON text once, so -0 becomes 0 (JSON has no -0).
      const jsonValue: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);
      const extras = fc.dictionary(fc.string(), jsonValue, { maxKeys: 4 });
      const call: fc.Arbitrary<ToolCall> = fc
        .tuple(fc.string(), fc.string(), fc.option(fc.string(), { nil: null }), fc.option(extras, { nil: undefined }))
        .map(([id, name, args, ex]) => toolCall(id, name, args, ex));
      const role = fc.constantFrom<Role>('system', 'user', 'assistant', 'tool');
      const message: fc.Arbitrary<Message> = fc
        .record(
          {
            role,
            content: fc.array(part, { maxLength: 5 }),
            toolCalls: fc.array(call, { maxLength: 3 }),
            toolCallId: fc.string(),
            name: fc.string(),
            partial: fc.boolean(),
          },
          { requiredKeys: ['role', 'content'] },
        )
        .map((m) => m as Message);
      fc.assert(
        fc.property(message, (m) => {
          expect(roundTrip(m)).to.deep.equal(m);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('validation failures', () => {
    it('an unknown part type names $.content[i].type', () => {
      const error = validationError(() => messageFromJSON({ role: 'user', content: [{ type: 'sticker', sticker: 'x' }] }));
      expect(error.path).to.equal('$.content[0].type');
      expect(error.message).to.contain('$.content[0].type').and.contain('sticker');
      expect(error.name).to.equal('MessageValidationError');
    });

    it('points at the bad part among good ones', () => {
      const error = validationError(() =>
        messageFromJSON({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'think', think: 'b' }, { type: 'bogus' }] }),
      );
      expect(error.path).to.equal('$.content[2].type');
    });

    it('a part without type, or with a non-string type', () => {
      expect(validationError(() => messageFromJSON({ role: 'user', content: [{ text: 'a' }] })).path).to.equal('$.content[0].type');
      expect(validationError(() => messageFromJSON({ role: 'user', content: [{ type: 1, text: 'a' }] })).path).to.equal('$.content[0].type');
    });

    it('a non-string text', () => {
      const error = validationError(() => messageFromJSON({ role: 'user', content: [{ type: 'text', text: 42 }] }));
      expect(error.path).to.equal('$.content[0].text');
      expect(error.issues).to.have.lengthOf(1);
    });

    it('a part that is not an object', () => {
      expect(validationError(() => messageFromJSON({ role: 'user', content: ['hello'] })).path).to.equal('$.content[0]');
    });

    it('bad fields inside parts', () => {
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ type: 'think', think: 'a', encrypted: 5 }, '$.content[0].encrypted'],
        [{ type: 'think' }, '$.content[0].think'],
        [{ type: 'image_url', image_url: { id: 'x' } }, '$.content[0].image_url.url'],
        [{ type: 'image_url', imageUrl: { url: 'x' } }, '$.content[0].image_url'],
        [{ type: 'audio_url', audio_url: { url: 'x', id: 3 } }, '$.content[0].audio_url.id'],
        [{ type: 'video_url', video_url: 'x' }, '$.content[0].video_url'],
      ];
      for (const [part, path] of cases) {
        expect(validationError(() => messageFromJSON({ role: 'user', content: [part] })).path, JSON.stringify(part)).to.equal(path);
      }
    });

    it('a missing role', () => {
      const error = validationError(() => messageFromJSON({ content: 'hi' }));
      expect(error.path).to.equal('$.role');
      expect(error.message).to.contain('$.role').and.contain('missing');
    });

    it('a bad role value', () => {
      for (const role of ['developer', 'USER', '_usage', 1, null]) {
        expect(validationError(() => messageFromJSON({ role, content: 'hi' })).path, String(role)).to.equal('$.role');
      }
    });

    it('a missing content', () => {
      const error = validationError(() => messageFromJSON({ role: 'user' }));
      expect(error.path).to.equal('$.content');
      expect(error.issues).to.deep.equal([{ path: '$.content', message: 'required value is missing' }]);
    });

    it('a content that is neither string, null nor list', () => {
      for (const content of [5, true, { type: 'text', text: 'a' }]) {
        expect(validationError(() => messageFromJSON({ role: 'user', content })).path, JSON.stringify(content)).to.equal('$.content');
      }
    });

    it('tool_calls that is not an array', () => {
      const error = validationError(() => messageFromJSON({ role: 'assistant', content: [], tool_calls: { id: 'a' } }));
      expect(error.path).to.equal('$.tool_calls');
    });

    it('bad tool calls', () => {
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ id: 1, function: { name: 'f', arguments: '{}' } }, '$.tool_calls[0].id'],
        [{ function: { name: 'f', arguments: '{}' } }, '$.tool_calls[0].id'],
        [{ type: 'tool', id: 'a', function: { name: 'f', arguments: '{}' } }, '$.tool_calls[0].type'],
        [{ id: 'a' }, '$.tool_calls[0].function'],
        [{ id: 'a', function: { arguments: '{}' } }, '$.tool_calls[0].function.name'],
        [{ id: 'a', function: { name: 'f', arguments: { x: 1 } } }, '$.tool_calls[0].function.arguments'],
        [{ id: 'a', function: { name: 'f', arguments: '{}' }, extras: [] }, '$.tool_calls[0].extras'],
        [{ id: 'a', function: { name: 'f', arguments: '{}' }, extras: { n: Number.NaN } }, '$.tool_calls[0].extras.n'],
        [{ id: 'a', function: { name: 'f', arguments: '{}' }, extras: { 'a key': () => 1 } }, '$.tool_calls[0].extras["a key"]'],
        ['call', '$.tool_calls[0]'],
      ];
      for (const [call, path] of cases) {
        const error = validationError(() => messageFromJSON({ role: 'assistant', content: [], tool_calls: [call] }));
        expect(error.path, JSON.stringify(call)).to.equal(path);
      }
    });

    it('bad message-level fields', () => {
      expect(validationError(() => messageFromJSON({ role: 'tool', content: 'x', tool_call_id: 7 })).path).to.equal('$.tool_call_id');
      expect(validationError(() => messageFromJSON({ role: 'user', content: 'x', name: ['n'] })).path).to.equal('$.name');
      expect(validationError(() => messageFromJSON({ role: 'user', content: 'x', partial: 'yes' })).path).to.equal('$.partial');
    });

    it('a non-object input', () => {
      for (const value of [null, undefined, 'message', 42, true, [], [{ role: 'user', content: 'x' }]]) {
        const error = validationError(() => messageFromJSON(value));
        expect(error.path, String(value)).to.equal('$');
        expect(error.issues).to.deep.equal([{ path: '$', message: error.issues[0]!.message }]);
      }
    });

    it('lists every issue in document order; path and message name the first', () => {
      const error = validationError(() =>
        messageFromJSON({ role: 'robot', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: null }], tool_calls: 'nope' }),
      );
      expect(error.issues.map((issue) => issue.path)).to.deep.equal(['$.role', '$.content[1].text', '$.tool_calls']);
      expect(error.path).to.equal('$.role');
      expect(error.message).to.match(/^Invalid message at \$\.role: /).and.contain('2 more');
      for (const issue of error.issues) expect(issue.message).to.be.a('string').that.is.not.empty;
      expect(Object.isFrozen(error.issues)).to.equal(true);
    });

    it('can be constructed directly', () => {
      const error = new MessageValidationError([{ path: '$.x', message: 'bad' }]);
      expect(error.path).to.equal('$.x');
      expect(error.message).to.equal('Invalid message at $.x: bad');
      expect(error.issues).to.deep.equal([{ path: '$.x', message: 'bad' }]);
    });
  });
});
