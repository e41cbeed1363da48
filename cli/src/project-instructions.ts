/**
 * A project's instructions for the agent: `AGENTS.md` (the name most agents read) and `KOSONG.md` in
 * the working directory, added to the system prompt.
 *
 * @module
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { escapeUnprintable } from './approval/printable-command.js';
import { PathEscapeError, openInside } from './tools/workspace-path.js';

/** The files read, in this order. */
export const INSTRUCTION_FILES: readonly string[] = ['AGENTS.md', 'KOSONG.md'];

/** Bytes of each file given to the model at most (64 KiB); the rest is left out, and the user told. */
export const MAX_INSTRUCTION_BYTES = 64 * 1024;

/** What was found. */
export interface ProjectInstructions {
  /** The text for the system prompt (each file under a heading naming it); empty when there is none. */
  readonly text: string;
  /** One line per file, for the user: what was read, or why not (escaped: safe to print). */
  readonly notices: readonly string[];
}

/**
 * Reads the instruction files of `cwd`. A file is read only inside the working directory (a link to
 * elsewhere is not followed: a cloned repository cannot make the agent send a file of the user's
 * to the model), as UTF-8 text, at most {@link MAX_INSTRUCTION_BYTES}.
 */
export async function readProjectInstructions(cwd: string): Promise<ProjectInstructions> {
  const parts: string[] = [];
  const notices: string[] = [];
  for (const name of INSTRUCTION_FILES) {
    let handle: FileHandle;
    try {
      handle = await openInside(cwd, name, constants.O_RDONLY);
    } catch (error) {
      if (error instanceof PathEscapeError) notices.push(`instructions: ${name} is a link to outside the working directory, not read`);
      else if ((error as NodeJS.ErrnoException).code !== 'ENOENT') notices.push(`instructions: ${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}), not used`);
      continue;
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        notices.push(`instructions: ${name} is not a regular file, not read`);
        continue;
      }
      const buffer = Buffer.alloc(Math.min(info.size, MAX_INSTRUCTION_BYTES));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(trimToCharacter(buffer.subarray(0, bytesRead)));
      } catch {
        notices.push(`instructions: ${name} is not UTF-8 text, not used`);
        continue;
      }
      const cut = info.size > MAX_INSTRUCTION_BYTES;
      parts.push(`# Project instructions (${name})\n\n${text.trimEnd()}`);
      const lines = text === '' ? 0 : text.trimEnd().split('\n').length;
      const heading = text.split('\n').find((line) => line.trim() !== '');
      notices.push(
        `instructions: ${name} (${lines} ${lines === 1 ? 'line' : 'lines'}${cut ? `, the first ${MAX_INSTRUCTION_BYTES / 1024} KiB of ${info.size} bytes` : ''})` +
          (heading === undefined ? '' : `: ${escapeUnprintable(heading.trim().slice(0, 120))}`),
      );
    } finally {
      await handle.close();
    }
  }
  return { text: parts.join('\n\n'), notices };
}

/** The bytes up to the last whole UTF-8 character (a file cut at the size limit may end mid-character). */
function trimToCharacter(bytes: Buffer): Buffer {
  let end = bytes.length;
  let back = 0;
  while (end > 0 && back < 4 && (bytes[end - 1]! & 0xc0) === 0x80) {
    end--;
    back++;
  }
  if (end > 0 && bytes[end - 1]! >= 0xc0) {
    const lead = bytes[end - 1]!;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (back + 1 < need) return bytes.subarray(0, end - 1);
  }
  return bytes;
}

/** The system prompt with the instructions after it (unchanged when there are none). */
export function withInstructions(systemPrompt: string, instructions: ProjectInstructions): string {
  return instructions.text === '' ? systemPrompt : `${systemPrompt}\n\n${instructions.text}`;
}
