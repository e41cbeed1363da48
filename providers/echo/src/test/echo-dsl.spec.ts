import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  audioURLPart,
  ChatProviderError,
  imageURLPart,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolCallPart,
  videoURLPart,
} from '@kosong/core';
import { expect } from 'chai';
import fc from 'fast-check';

import { EchoScriptError, parseEchoScript } from '../index.js';
import { WORKED_EXAMPLE, WORKED_EXAMPLE_PARTS } from './fixtures.js';
import { lines } from './support.js';

/** Parses a script expected to fail and returns the error. */
function parseError(script: string): unknown {
  try {
    parseEchoScript(script);
  } catch (error) {
    return error;
  }
  return expect.fail(`expected ${JSON.stringify(script)} to fail`);
}

/** Expects a script to fail with an EchoScriptError of exactly this text, at this line. */
function expectScriptError(script: string, message: string, lineNumber = 1): void {
  const error = parseError(script);
  expect(error).to.be.instanceOf(EchoScriptError);
  expect(ChatProviderError.isInstance(error), 'a ChatProviderError').to.equal(true);
  expect(EchoScriptError.isInstance(error)).to.equal(true);
  const scriptError = error as EchoScriptError;
  expect(scriptError.message).to.equal(message);
  expect(scriptError.lineNumber).to.equal(lineNumber);
  expect(scriptError.line).to.equal(script.split('\n')[lineNumber - 1]);
}

describe('parseEchoScript', () => {
  describe('the worked example (kosong spec §8.3)', () => {
    it('gives every part kind, the id and the usage', () => {
      const script = parseEchoScript(WORKED_EXAMPLE);
      expect(script.id).to.equal('echo-42');
      expect(script.usage).to.deep.equal(tokenUsage({ inputOther: 10, output: 2, inputCacheRead: 3 }));
      expect(script.parts).to.deep.equal(WORKED_EXAMPLE_PARTS);
      expect(script.finishReason).to.equal(undefined);
    });

    it('the docstring example: id, usage and a tool call streamed in three pieces', () => {
      const script = parseEchoScript(
        lines(
          'id: echo-42',
          'usage: {"input_other": 10, "output": 2}',
          'think: thinking...',
          'text: Hello,',
          'text:  world!',
          'image_url: {"url": "https://example.com/image.png", "id": "img-1"}',
          'tool_call: {"id": "call-1", "name": "search", "arguments": "{\\"query"}',
          'tool_call_part: {"arguments_part": "\\": \\"what time is"}',
          'tool_call_part: {"arguments_part": " it?\\"}"}',
        ),
      );
      expect(script.usage).to.deep.equal(tokenUsage({ inputOther: 10, output: 2 }));
      expect(script.parts.slice(-3)).to.deep.equal([
        toolCall('call-1', 'search', '{"query'),
        toolCallPart('": "what time is'),
        toolCallPart(' it?"}'),
      ]);
    });

    it('an empty script has no parts, id, usage or finish reason', () => {
      expect(parseEchoScript('')).to.deep.equal({ parts: [], id: undefined, usage: undefined, finishReason: undefined });
    });
  });

  describe('lines', () => {
    it('skips blank lines, # comments, markdown fences and bare "echo" lines (any case)', () => {
      const script = lines('echo', '```', '', '   ', '# a comment', '   # an indented comment', 'ECHO', '  Echo  ', '```text', 'text: hi', '```');
      expect(parseEchoScript(script).parts).to.deep.equal([textPart('hi')]);
    });

    it('"echo:" is a directive of the unknown kind "echo", not a skipped line', () => {
      expectScriptError('echo: hi', "Unknown echo DSL kind 'echo' at line 1: 'echo: hi'");
    });

    it('trims every line, so indented scripts work', () => {
      const script = parseEchoScript('\n    text: Hello\n      tool_call: {"id": "c", "name": "f"}\n\t\tid: x\t\n');
      expect(script.parts).to.deep.equal([textPart('Hello'), toolCall('c', 'f', null)]);
      expect(script.id).to.equal('x');
    });

    it('splits lines as Python does (\\r\\n, \\r, \\u2028 …) and counts them from 1', () => {
      expect(parseEchoScript('text: a\r\ntext: b\rtext: c\u2028text: d').parts).to.deep.equal(['a', 'b', 'c', 'd'].map((t) => textPart(t)));
      const error = parseError('text: a\r\n\r\nbroken') as EchoScriptError;
      expect(error.lineNumber).to.equal(3);
      expect(error.message).to.equal("Invalid echo DSL at line 3: 'broken'");
    });

    it('splits at the first colon only (URLs and JSON keep theirs)', () => {
      expect(parseEchoScript('text: time: 12:30').parts).to.deep.equal([textPart('time: 12:30')]);
      expect(parseEchoScript('image_url: https://a.example/x.png').parts).to.deep.equal([imageURLPart('https://a.example/x.png')]);
    });

    it('kinds are case-insensitive and may have spaces before the colon', () => {
      const script = parseEchoScript(
        lines('ID: up', 'Usage: output=1', 'TEXT: a', 'Think : b', 'Tool_Call: {"id": "c", "name": "f"}', 'TOOL_CALL_PART: x', 'Image_URL: u', 'FINISH: stop'),
      );
      expect(script.id).to.equal('up');
      expect(script.usage).to.deep.equal(tokenUsage({ output: 1 }));
      expect(script.finishReason).to.equal('stop');
      expect(script.parts).to.deep.equal([textPart('a'), thinkPart('b'), toolCall('c', 'f', null), toolCallPart('x'), imageURLPart('u')]);
      expect(parseError('ERROR: 500')).to.be.instanceOf(APIStatusError);
    });
  });

  describe('payloads and quoting', () => {
    it('removes exactly one space after the colon', () => {
      const parts = parseEchoScript(lines('text:no space', 'text: one', 'text:  two', 'text:   three', 'text:')).parts;
      expect(parts).to.deep.equal([textPart('no space'), textPart('one'), textPart(' two'), textPart('  three'), textPart('')]);
    });

    it('trailing whitespace is gone with the trimmed line; quotes keep it', () => {
      expect(parseEchoScript('text: a   ').parts).to.deep.equal([textPart('a')]);
      expect(parseEchoScript('text: "  padded  "').parts).to.deep.equal([textPart('  padded  ')]);
    });

    it('strips one pair of matching quotes from text, think and id, and nothing else', () => {
      const script = parseEchoScript(
        lines(`text: 'single'`, 'text: "double"', `text: "mismatched'`, 'text: "', 'text: ""', `text: "'nested'"`, 'text: "a" and "b"', `think: 'hmm'`, 'id: "quoted-id"'),
      );
      expect(script.parts).to.deep.equal([
        textPart('single'),
        textPart('double'),
        textPart(`"mismatched'`),
        textPart('"'),
        textPart(''),
        textPart(`'nested'`),
        textPart('a" and "b'),
        thinkPart('hmm'),
      ]);
      expect(script.id).to.equal('quoted-id');
    });

    it('text is never JSON-decoded', () => {
      expect(parseEchoScript('text: "a\\nb"').parts).to.deep.equal([textPart('a\\nb')]);
      expect(parseEchoScript('text: {"a": 1}').parts).to.deep.equal([textPart('{"a": 1}')]);
    });

    it('id, usage and finish: the last one wins', () => {
      const script = parseEchoScript(lines('id: a', 'usage: output=1', 'finish: stop', 'text: x', 'id: b', 'usage: output=2', 'finish: length'));
      expect(script.id).to.equal('b');
      expect(script.usage).to.deep.equal(tokenUsage({ output: 2 }));
      expect(script.finishReason).to.equal('length');
    });
  });

  describe('usage', () => {
    it('reads key=value tokens separated by spaces or commas; missing fields are 0', () => {
      expect(parseEchoScript('usage: input_other=1 output=2 input_cache_read=3').usage).to.deep.equal(
        tokenUsage({ inputOther: 1, output: 2, inputCacheRead: 3 }),
      );
      expect(parseEchoScript('usage: input_other=1,output=2, input_cache_creation=4').usage).to.deep.equal(
        tokenUsage({ inputOther: 1, output: 2, inputCacheCreation: 4 }),
      );
    });

    it('reads JSON, takes integers written as strings, and ignores unknown keys', () => {
      expect(parseEchoScript('usage: {"output": "7", "input_other": 0, "reasoning": 3}').usage).to.deep.equal(tokenUsage({ output: 7 }));
      expect(parseEchoScript(`usage: output='12' input_other="3"`).usage).to.deep.equal(tokenUsage({ output: 12, inputOther: 3 }));
    });

    it('rejects a field that is not an integer', () => {
      expectScriptError('usage: output=abc', "Usage field 'output' must be an integer, got 'abc' (line 1: 'usage: output=abc')");
      expectScriptError('usage: {"output": 2.5}', `Usage field 'output' must be an integer, got 2.5 (line 1: 'usage: {"output": 2.5}')`);
      expectScriptError('usage: output=null', "Usage field 'output' must be an integer, got None (line 1: 'usage: output=null')");
      expectScriptError('usage: input_other=true', "Usage field 'input_other' must be an integer, got True (line 1: 'usage: input_other=true')");
    });

    it('rejects a payload that is not a mapping', () => {
      expectScriptError('usage:', "usage payload cannot be empty. (line 1: 'usage:')");
      expectScriptError('usage: input_other=1 output', "Invalid token 'output' in usage payload. (line 1: 'usage: input_other=1 output')");
      expectScriptError('usage: null', "Invalid token 'null' in usage payload. (line 1: 'usage: null')");
      expectScriptError('usage: [1, 2]', "usage payload must be an object, got [1, 2] (line 1: 'usage: [1, 2]')");
      expectScriptError('usage: "x"', `usage payload must be an object, got 'x' (line 1: 'usage: "x"')`);
    });
  });

  describe('media', () => {
    it('takes a URL string (quoted or not) or an object with url and optional id', () => {
      const parts = parseEchoScript(
        lines(
          'image_url: https://example.com/a.png',
          'image_url: "https://example.com/b.png"',
          'audio_url: {"url": "data:audio/wav;base64,AAAA", "id": "a-1"}',
          'video_url: {"url": "https://example.com/v.mp4", "id": null}',
          'video_url: url=https://example.com/w.mp4 id=v-2',
        ),
      ).parts;
      expect(parts).to.deep.equal([
        imageURLPart('https://example.com/a.png'),
        imageURLPart('https://example.com/b.png'),
        audioURLPart('data:audio/wav;base64,AAAA', 'a-1'),
        videoURLPart('https://example.com/v.mp4'),
        videoURLPart('url=https://example.com/w.mp4 id=v-2'),
      ]);
    });

    it('rejects a missing url, a non-string id and a payload that is neither', () => {
      expectScriptError('image_url: {"id": "x"}', `image_url requires a url field, got {'id': 'x'} (line 1: 'image_url: {"id": "x"}')`);
      expectScriptError('audio_url: {"url": "u", "id": 5}', `audio_url id must be a string when provided. (line 1: 'audio_url: {"url": "u", "id": 5}')`);
      expectScriptError('video_url: 42', "video_url expects url string or object, got 42 (line 1: 'video_url: 42')");
      expectScriptError('image_url:', "image_url expects url string or object, got None (line 1: 'image_url:')");
      expectScriptError('image_url: [1]', "image_url expects url string or object, got [1] (line 1: 'image_url: [1]')");
    });
  });

  describe('tool_call', () => {
    it('reads id, name, arguments and extras from JSON', () => {
      expect(parseEchoScript('tool_call: {"id": "c1", "name": "ls", "arguments": "{}", "extras": {"k": [1, null]}}').parts).to.deep.equal([
        toolCall('c1', 'ls', '{}', { k: [1, null] }),
      ]);
    });

    it('missing or null arguments are null', () => {
      expect(parseEchoScript(lines('tool_call: {"id": "a", "name": "f"}', 'tool_call: {"id": "b", "name": "g", "arguments": null}')).parts).to.deep.equal([
        toolCall('a', 'f', null),
        toolCall('b', 'g', null),
      ]);
    });

    it('reads name, arguments and extras from a nested "function" object, the top level first', () => {
      const parts = parseEchoScript(
        lines(
          'tool_call: {"id": "c1", "function": {"name": "f", "arguments": "{\\"a\\":1}", "extras": {"sig": "s"}}}',
          'tool_call: {"id": "c2", "name": "top", "arguments": "{}", "function": {"name": "nested", "arguments": "[]", "extras": {"x": 1}}}',
          'tool_call: {"id": "c3", "name": "", "function": {"name": "fallback"}}',
        ),
      ).parts;
      expect(parts).to.deep.equal([
        toolCall('c1', 'f', '{"a":1}', { sig: 's' }),
        toolCall('c2', 'top', '{}', { x: 1 }),
        toolCall('c3', 'fallback', null),
      ]);
    });

    it('reads key=value tokens; extras that are not an object are dropped', () => {
      expect(parseEchoScript(`tool_call: id=c9 name=read_file arguments='{}' extras=[1]`).parts).to.deep.equal([toolCall('c9', 'read_file', '{}')]);
    });

    it('never reads inherited properties: a __proto__ key is just a key', () => {
      for (const script of ['tool_call: name=f __proto__={"id":"c"}', 'tool_call: {"__proto__": {"id": "c", "name": "f"}}']) {
        expect((parseError(script) as Error).message).to.match(/^tool_call requires string id and name at line 1/);
      }
      expect(parseEchoScript('tool_call_part: {"__proto__": {"arguments_part": "x"}}').parts).to.deep.equal([toolCallPart(null)]);
    });

    it('rejects a missing id or name, non-string arguments and a non-object payload', () => {
      expectScriptError('tool_call: {"name": "x"}', `tool_call requires string id and name at line 1: 'tool_call: {"name": "x"}'`);
      expectScriptError('tool_call: {"id": 1, "name": "x"}', `tool_call requires string id and name at line 1: 'tool_call: {"id": 1, "name": "x"}'`);
      expectScriptError('tool_call: id=c1', "tool_call requires string id and name at line 1: 'tool_call: id=c1'");
      expectScriptError(
        'tool_call: {"id": "c", "name": "x", "arguments": {"a": 1}}',
        `tool_call.arguments must be a string at line 1, got dict: 'tool_call: {"id": "c", "name": "x", "arguments": {"a": 1}}'`,
      );
      expectScriptError(
        'tool_call: {"id": "c", "name": "x", "arguments": 3}',
        `tool_call.arguments must be a string at line 1, got int: 'tool_call: {"id": "c", "name": "x", "arguments": 3}'`,
      );
      expectScriptError('tool_call: [1]', "tool_call payload must be an object, got [1] (line 1: 'tool_call: [1]')");
      expectScriptError('tool_call:', "tool_call payload cannot be empty. (line 1: 'tool_call:')");
      expectScriptError('tool_call: search', "Invalid token 'search' in tool_call payload. (line 1: 'tool_call: search')");
    });
  });

  describe('tool_call_part', () => {
    it('reads strings, JSON strings and {arguments_part}; empty and null are null', () => {
      const parts = parseEchoScript(
        lines(
          'tool_call_part: {',
          'tool_call_part: "\\"city\\":\\"Hangzhou\\""',
          'tool_call_part: }',
          `tool_call_part: '"quoted"'`,
          'tool_call_part: {"arguments_part": "x"}',
          'tool_call_part:',
          'tool_call_part: null',
          'tool_call_part: ""',
          'tool_call_part: {"arguments_part": ""}',
          'tool_call_part: {"other": 1}',
        ),
      ).parts;
      expect(parts).to.deep.equal([
        toolCallPart('{'),
        toolCallPart('"city":"Hangzhou"'),
        toolCallPart('}'),
        toolCallPart('"quoted"'),
        toolCallPart('x'),
        toolCallPart(null),
        toolCallPart(null),
        toolCallPart(null),
        toolCallPart(null),
        toolCallPart(null),
      ]);
    });

    it('writes objects and lists as compact JSON, and other JSON scalars as their JSON text', () => {
      const parts = parseEchoScript(lines('tool_call_part: {"arguments_part": {"a": [1, 2]}}', 'tool_call_part: [1, {"b": true}]', 'tool_call_part: 42', 'tool_call_part: true')).parts;
      expect(parts).to.deep.equal([toolCallPart('{"a":[1,2]}'), toolCallPart('[1,{"b":true}]'), toolCallPart('42'), toolCallPart('true')]);
    });
  });

  describe('finish (extension)', () => {
    for (const reason of ['stop', 'tool_calls', 'length', 'content_filter', 'other'] as const) {
      it(`finish: ${reason}`, () => {
        expect(parseEchoScript(`text: x\nfinish: ${reason}`).finishReason).to.equal(reason);
      });
    }

    it('accepts any case and quotes, and rejects anything else', () => {
      expect(parseEchoScript('finish: "Tool_Calls"').finishReason).to.equal('tool_calls');
      expectScriptError(
        'finish: done',
        "Invalid finish reason 'done': expected stop, tool_calls, length, content_filter or other. (line 1: 'finish: done')",
      );
      expectScriptError('finish:', "Invalid finish reason '': expected stop, tool_calls, length, content_filter or other. (line 1: 'finish:')");
    });
  });

  describe('error directives', () => {
    it('error: 429 → APIStatusError 429 with the default message', () => {
      const error = parseError('error: 429');
      expect(error).to.be.instanceOf(APIStatusError);
      expect(APIStatusError.isInstance(error)).to.equal(true);
      expect((error as APIStatusError).statusCode).to.equal(429);
      expect((error as APIStatusError).message).to.equal('Simulated 429 error');
      expect(EchoScriptError.isInstance(error), 'a simulated error is not a script error').to.equal(false);
    });

    it('error: 500 boom → APIStatusError 500 "boom"; the message is trimmed', () => {
      const error = parseError('error: 500 boom') as APIStatusError;
      expect(error).to.be.instanceOf(APIStatusError);
      expect([error.statusCode, error.message]).to.deep.equal([500, 'boom']);
      const spaced = parseError('error:   503   service   down  ') as APIStatusError;
      expect([spaced.statusCode, spaced.message]).to.deep.equal([503, 'service   down']);
      expect((parseError('error: 0429') as APIStatusError).statusCode).to.equal(429);
    });

    it('error: connection reset → APIConnectionError "reset"; bare: the default message', () => {
      const error = parseError('error: connection reset');
      expect(error).to.be.instanceOf(APIConnectionError);
      expect(APIConnectionError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.equal('reset');
      expect((parseError('error: Connection') as Error).message).to.equal('Simulated connection error');
      expect(parseError('error: connection')).to.not.be.instanceOf(APITimeoutError);
    });

    it('error: timeout slow → APITimeoutError "slow"; bare: the default message', () => {
      const error = parseError('error: timeout slow');
      expect(error).to.be.instanceOf(APITimeoutError);
      expect(APITimeoutError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.equal('slow');
      expect((parseError('error: TIMEOUT') as Error).message).to.equal('Simulated timeout error');
    });

    it('rejects an empty or unknown error spec', () => {
      expectScriptError('error:', "Empty error payload at line 1: 'error:'");
      expectScriptError('error:    ', "Empty error payload at line 1: 'error:    '");
      expectScriptError(
        'error: boom now',
        "Invalid error spec at line 1: expected status code or 'connection'/'timeout', got 'boom' in 'error: boom now'",
      );
      expectScriptError('error: 4.5', "Invalid error spec at line 1: expected status code or 'connection'/'timeout', got '4.5' in 'error: 4.5'");
      expectScriptError(
        'error: connection-reset',
        "Invalid error spec at line 1: expected status code or 'connection'/'timeout', got 'connection-reset' in 'error: connection-reset'",
      );
    });

    it('earlier lines are parsed first: their errors win', () => {
      expectScriptError(lines('text: fine', 'usage: output=x', 'error: 500'), "Usage field 'output' must be an integer, got 'x' (line 2: 'usage: output=x')", 2);
      expectScriptError(lines('broken line', 'error: 500'), "Invalid echo DSL at line 1: 'broken line'");
      expect((parseError(lines('error: 429', 'error: 500')) as APIStatusError).statusCode).to.equal(429);
    });

    it('later lines are never parsed', () => {
      const error = parseError(lines('text: a', 'error: 503 down', 'not a directive', 'bogus: kind', 'usage: nonsense'));
      expect(error).to.be.instanceOf(APIStatusError);
      expect((error as APIStatusError).statusCode).to.equal(503);
    });
  });

  describe('other parse errors', () => {
    it('a line without a colon', () => {
      expectScriptError(lines('text: ok', 'foo bar'), "Invalid echo DSL at line 2: 'foo bar'", 2);
    });

    it('quotes the line as written (indentation kept), with Python quoting', () => {
      expectScriptError(lines('', '  \tfoo'), "Invalid echo DSL at line 2: '  \\tfoo'", 2);
      expectScriptError(`it's`, `Invalid echo DSL at line 1: "it's"`);
      expectScriptError(`it's "x"`, `Invalid echo DSL at line 1: 'it\\'s "x"'`);
      expectScriptError('back\\slash', "Invalid echo DSL at line 1: 'back\\\\slash'");
    });

    it('an unknown kind (named in lower case)', () => {
      expectScriptError(lines('# c', '  BANANA: x'), "Unknown echo DSL kind 'banana' at line 2: '  BANANA: x'", 2);
      expectScriptError(': x', "Unknown echo DSL kind '' at line 1: ': x'");
    });
  });

  describe('robustness', () => {
    it('any text either parses or fails with a ChatProviderError', () => {
      const kinds = ['text', 'think', 'id', 'usage', 'finish', 'error', 'image_url', 'tool_call', 'tool_call_part', 'bogus', '#', '```'];
      const line = fc.oneof(
        fc.string(),
        fc.tuple(fc.constantFrom(...kinds), fc.oneof(fc.string(), fc.json())).map(([kind, payload]) => `${kind}: ${payload}`),
      );
      fc.assert(
        fc.property(fc.array(line, { maxLength: 6 }), (scriptLines) => {
          try {
            const script = parseEchoScript(scriptLines.join('\n'));
            expect(script.parts).to.be.an('array');
          } catch (error) {
            expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
          }
        }),
        { numRuns: 400, seed: 7 },
      );
    });
  });
});
