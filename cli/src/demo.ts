import { definePlugin, type Plugin } from '@kosong/core';
import { ScriptedEchoChatProvider } from '@kosong/provider-echo';

/** Splits text into streamed `text:` (or `think:`) lines of a few words, as a model would stream it. */
function streamed(kind: 'text' | 'think', text: string): string {
  const words = text.match(/\S+\s*/g) ?? [];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += 2) chunks.push(words.slice(i, i + 2).join(''));
  return chunks.map((chunk) => `${kind}: ${JSON.stringify(chunk)}`).join('\n');
}

const call = (id: string, name: string, args: object): string =>
  `tool_call: ${JSON.stringify({ id, name, arguments: JSON.stringify(args) })}`;

/**
 * The scripted demo model: in three steps it looks around the working directory with the built-in
 * tools (two calls at once, one of them refused for leaving the directory), computes something, and
 * sums up. Its text cannot depend on what the tools return: it is a script.
 */
export function demoScripts(): string[] {
  return [
    [
      'id: demo-1',
      'usage: {"input_other": 412, "output": 58}',
      streamed('think', 'The user wants a tour. I will list the directory and read package.json at the same time.'),
      streamed('text', "Let me look around this directory. I'll list it and read package.json at the same time. "),
      call('call_list', 'list_directory', { path: '.' }),
      streamed('text', 'While those run, '),
      call('call_read', 'read_file', { path: 'package.json' }),
      streamed('text', "I'll also try a file outside the working directory, which the tools must refuse."),
      call('call_escape', 'read_file', { path: '../../etc/passwd' }),
      'finish: tool_calls',
    ].join('\n'),
    [
      'id: demo-2',
      'usage: {"input_other": 980, "input_cache_read": 412, "output": 41}',
      streamed('think', 'Now a quick computation with the calculator tool.'),
      streamed('text', 'The refusal is what should happen. Now a small computation: how many tokens fit in 32 pages of 500 words at 1.3 tokens a word?'),
      call('call_calc', 'calculate', { expression: '32 * 500 * 1.3' }),
      'finish: tool_calls',
    ].join('\n'),
    [
      'id: demo-3',
      'usage: {"input_other": 120, "input_cache_read": 1392, "output": 64}',
      streamed(
        'text',
        'Done. I listed the directory and read package.json in parallel while I was still writing, ' +
          'the attempt to leave the working directory came back as an error result, and the calculator ' +
          'answered the question. Every result came back to me in the order I asked for them.',
      ),
      'finish: stop',
    ].join('\n'),
  ];
}

/**
 * The `demo` provider: a scripted echo model that plays the tour (again on every turn of a REPL,
 * up to 20 turns).
 */
export function demoPlugin(): Plugin {
  const scripts = Array.from({ length: 20 }, demoScripts).flat();
  return definePlugin({
    name: 'provider:demo',
    setup: (ctx) => ctx.bindChatProvider('demo', () => new ScriptedEchoChatProvider(scripts, { delayMs: 15 }), { default: true }),
  });
}
