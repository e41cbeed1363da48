import { toolError, toolOk, type ToolReturnValue } from '@kosong/core';
import type { FileHandle } from 'node:fs/promises';
import { formatCount } from '../format-count.js';
import { formatSize } from '../format-size.js';

/** The largest file `read_file` reads. */
export const MAX_FILE_BYTES = 256 * 1024;

/**
 * Reads a UTF-8 text file from an open descriptor (see `openInside`): refuses what is not a
 * regular file, a file larger than {@link MAX_FILE_BYTES}, and a binary file (one with NUL bytes,
 * or that is not valid UTF-8), each with an error result that says why. `path` names the file in
 * messages.
 */
export async function readTextFile(handle: FileHandle, path: string): Promise<ToolReturnValue> {
  const info = await handle.stat();
  if (!info.isFile()) return toolError({ message: `"${path}" is not a file`, brief: 'Not a file' });
  if (info.size > MAX_FILE_BYTES) return tooLarge(path, info.size);
  // Read one byte more than allowed: a file that grew since stat() is refused too.
  const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
    if (length === buffer.length) return tooLarge(path, undefined);
  }
  const bytes = buffer.subarray(0, length);
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    return toolError({
      message: `"${path}" is a binary file (a NUL byte at byte ${nul}); read_file reads UTF-8 text files only`,
      brief: 'Binary file',
    });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return toolError({ message: `"${path}" is not UTF-8 text (a binary file?); read_file reads UTF-8 text files only`, brief: 'Not UTF-8 text' });
  }
  const lines = text.split('\n').length;
  return toolOk({ output: text, brief: `Read ${path} (${lines} line${lines === 1 ? '' : 's'})` });
}

/** `bytes`: the file's size, `undefined` when it grew past the limit while being read. */
function tooLarge(path: string, bytes: number | undefined): ToolReturnValue {
  const size = bytes === undefined ? `more than ${formatSize(MAX_FILE_BYTES)}` : `${formatSize(bytes)} (${formatCount(bytes)} bytes)`;
  return toolError({ message: `"${path}" is ${size}; read_file reads files up to ${formatSize(MAX_FILE_BYTES)}`, brief: 'File too large' });
}
