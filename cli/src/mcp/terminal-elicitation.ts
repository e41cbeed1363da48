/**
 * An MCP server's elicitation (`elicitation/create`: the server asks the user for some values) put
 * to the user on the terminal: the server's message, then one question per field of its requested
 * schema (text, number, yes/no, a choice). Where nobody can be asked, it is declined.
 *
 * @module
 */
import type { McpElicitationHandler, McpElicitationRequest } from '@kosong/toolset-mcp';
import { escapeUnprintable } from '../approval/printable-command.js';
import type { AskUser } from '../approval/bash-approval.js';
import type { Renderer } from '../render/renderer.js';

/** A choice of a titled enum (`oneOf` / `anyOf` of `{ const, title }`). */
interface TitledChoice {
  readonly const?: unknown;
  readonly title?: string;
}

/** One field of a requested schema, as the MCP spec allows them (flat: text, number, yes/no, a choice, several choices). */
interface FieldSchema {
  readonly type?: string;
  readonly title?: string;
  readonly description?: string;
  readonly format?: string;
  readonly enum?: readonly unknown[];
  readonly enumNames?: readonly string[];
  readonly oneOf?: readonly TitledChoice[];
  readonly items?: { readonly enum?: readonly unknown[]; readonly anyOf?: readonly TitledChoice[] };
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly default?: unknown;
}

/** The choices of a field (value and what the user is shown), if it is a choice. */
function choicesOf(field: FieldSchema): { readonly values: readonly string[]; readonly labels: readonly string[]; readonly many: boolean } | undefined {
  const fromTitled = (list: readonly TitledChoice[]) => ({ values: list.map((c) => String(c.const)), labels: list.map((c) => c.title ?? String(c.const)) });
  if (field.type === 'array') {
    if (Array.isArray(field.items?.enum)) return { values: field.items.enum.map(String), labels: field.items.enum.map(String), many: true };
    if (Array.isArray(field.items?.anyOf)) return { ...fromTitled(field.items.anyOf), many: true };
    return undefined;
  }
  if (Array.isArray(field.oneOf)) return { ...fromTitled(field.oneOf), many: false };
  if (Array.isArray(field.enum)) return { values: field.enum.map(String), labels: field.enum.map((v, i) => field.enumNames?.[i] ?? String(v)), many: false };
  return undefined;
}

/** What the user is told, once a session, when a server's question was declined because nobody could be asked. */
export const NO_TERMINAL_ELICITATION_NOTICE = 'mcp: a server asked for input, and this run has no terminal to ask on: declined';

/** Options of {@link terminalElicitation}. */
export interface TerminalElicitationOptions {
  /** How to ask the user; none: every request is declined (told once). */
  readonly ask: AskUser | undefined;
  /** Held while the questions wait; where the notice goes. */
  readonly renderer: Renderer;
}

/**
 * The elicitation handler of the CLI's MCP servers. `y` at the first question goes on to the
 * fields, `n` declines, `c` (or Ctrl-D, or the server cancelling) cancels. A field's answer is
 * checked (a number, in range; a choice, or several, by number or value; yes/no; a text's length
 * and its `email`, `uri` or `date` format) and asked again when it does not fit; an empty answer
 * takes the field's default, or leaves an optional field out. Everything the
 * server sent is shown escaped. Requests are asked one at a time.
 */
export function terminalElicitation(options: TerminalElicitationOptions): McpElicitationHandler {
  let noticeGiven = false;
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const { ask, renderer } = options;
    if (ask === undefined) {
      if (!noticeGiven) renderer.info(NO_TERMINAL_ELICITATION_NOTICE);
      noticeGiven = true;
      return { action: 'decline' };
    }
    const answer = queue.then(async () => {
      renderer.pause();
      try {
        return await askAll(ask, request);
      } finally {
        renderer.resume();
      }
    });
    queue = answer.catch(() => undefined);
    return answer;
  };
}

type Answer = Awaited<ReturnType<McpElicitationHandler>>;

async function askAll(ask: AskUser, request: McpElicitationRequest): Promise<Answer> {
  const { signal } = request;
  const params = request.params as { readonly message: string; readonly requestedSchema?: { readonly properties?: Readonly<Record<string, FieldSchema>>; readonly required?: readonly string[] } };
  const server = escapeUnprintable(request.server);
  let question = `MCP server ${server} asks: ${escapeUnprintable(params.message, true)}\nAnswer it? [y]es / [n]o (decline) / [c]ancel `;
  for (;;) {
    const reply = await ask(question, signal);
    if (reply === undefined) return { action: 'cancel' };
    const word = reply.trim().toLowerCase();
    if (word === 'n' || word === 'no') return { action: 'decline' };
    if (word === 'c' || word === 'cancel') return { action: 'cancel' };
    if (word === 'y' || word === 'yes') break;
    question = 'Please answer y (yes: give the values), n (no: decline) or c (cancel): ';
  }
  const properties = params.requestedSchema?.properties ?? {};
  const required = new Set(params.requestedSchema?.required ?? []);
  const content: Record<string, FieldValue> = {};
  for (const [name, field] of Object.entries(properties)) {
    const value = await askField(ask, signal, name, field, required.has(name));
    if (value === CANCELLED) return { action: 'cancel' };
    if (value !== SKIPPED) content[name] = value;
  }
  return { action: 'accept', content };
}

const CANCELLED = Symbol('cancelled');
const SKIPPED = Symbol('skipped');

type FieldValue = string | number | boolean | string[];

async function askField(ask: AskUser, signal: AbortSignal, name: string, field: FieldSchema, required: boolean): Promise<FieldValue | typeof CANCELLED | typeof SKIPPED> {
  const label = escapeUnprintable(field.title ?? name);
  const about = field.description === undefined ? '' : ` (${escapeUnprintable(field.description)})`;
  const choices = choicesOf(field);
  if (field.type === 'array' && choices === undefined) return required ? CANCELLED : SKIPPED; // a list of free values: not asked for on a terminal
  const kind =
    choices !== undefined
      ? `\n${choices.labels.map((shown, i) => `  ${i + 1}. ${escapeUnprintable(shown)}`).join('\n')}\n${choices.many ? 'choose numbers, comma-separated' : 'choose a number'}`
      : field.type === 'boolean'
        ? 'y/n'
        : field.type === 'number' || field.type === 'integer'
          ? `${field.type === 'integer' ? 'a whole number' : 'a number'}${range(field)}`
          : field.format === undefined
            ? 'text'
            : `text, ${escapeUnprintable(field.format)}`;
  const hasDefault = field.default !== undefined;
  const skip = hasDefault ? `, Enter for ${escapeUnprintable(JSON.stringify(field.default))}` : required ? '' : ', Enter to leave it out';
  let question = `${label}${about} [${kind}${skip}]: `;
  for (;;) {
    const reply = await ask(question, signal);
    if (reply === undefined) return CANCELLED;
    const text = reply.trim();
    if (text === '' && hasDefault) return field.default as FieldValue;
    if (text === '' && !required) return SKIPPED;
    const parsed = parseField(text, field, choices);
    if (parsed.ok) return parsed.value;
    question = `${parsed.why}; ${label} again: `;
  }
}

function range(field: FieldSchema): string {
  if (field.minimum !== undefined && field.maximum !== undefined) return ` from ${field.minimum} to ${field.maximum}`;
  if (field.minimum !== undefined) return ` of at least ${field.minimum}`;
  if (field.maximum !== undefined) return ` of at most ${field.maximum}`;
  return '';
}

function parseField(text: string, field: FieldSchema, choices: ReturnType<typeof choicesOf>): { ok: true; value: FieldValue } | { ok: false; why: string } {
  if (choices !== undefined) {
    const pick = (one: string): string | undefined => {
      const index = Number(one);
      if (Number.isInteger(index) && index >= 1 && index <= choices.values.length) return choices.values[index - 1];
      return choices.values.includes(one) ? one : undefined;
    };
    if (!choices.many) {
      const value = pick(text);
      return value === undefined ? { ok: false, why: `choose a number from 1 to ${choices.values.length}` } : { ok: true, value };
    }
    const picked = text.split(',').map((one) => pick(one.trim()));
    if (picked.some((value) => value === undefined)) return { ok: false, why: `choose numbers from 1 to ${choices.values.length}, comma-separated` };
    const values = [...new Set(picked as string[])];
    if (field.minItems !== undefined && values.length < field.minItems) return { ok: false, why: `choose at least ${field.minItems}` };
    if (field.maxItems !== undefined && values.length > field.maxItems) return { ok: false, why: `choose at most ${field.maxItems}` };
    return { ok: true, value: values };
  }
  if (field.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true };
    if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false };
    return { ok: false, why: 'answer y or n' };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const n = text === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(n) || (field.type === 'integer' && !Number.isInteger(n))) return { ok: false, why: `not ${field.type === 'integer' ? 'a whole number' : 'a number'}` };
    if ((field.minimum !== undefined && n < field.minimum) || (field.maximum !== undefined && n > field.maximum)) return { ok: false, why: `out of range${range(field)}` };
    return { ok: true, value: n };
  }
  if (field.minLength !== undefined && text.length < field.minLength) return { ok: false, why: `at least ${field.minLength} characters` };
  if (field.maxLength !== undefined && text.length > field.maxLength) return { ok: false, why: `at most ${field.maxLength} characters` };
  if (field.format === 'email' && !/^[^\s@]+@[^\s@]+$/.test(text)) return { ok: false, why: 'not an email address' };
  if (field.format === 'uri' && !URL.canParse(text)) return { ok: false, why: 'not a URI (with its scheme, e.g. https://)' };
  if (field.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(text)) return { ok: false, why: 'not a date (YYYY-MM-DD)' };
  return { ok: true, value: text };
}
