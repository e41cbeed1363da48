/**
 * The CLI's search tools, `grep` and `glob`: the working directory walked by `fdir` (symbolic links
 * neither followed nor listed, `.git` skipped), `.gitignore` files honoured (each for the paths below
 * its directory, with `ignore`'s git semantics), paths matched by `picomatch`. Both only read, and
 * declare the replay policy `'safe'`; their output is bounded. The three libraries load on the first
 * search, not when the CLI starts.
 *
 * @module
 */
import { toolError, toolOk, type ToolContext, type ToolReturnValue } from '@kosong/core';
import type { CallableTool } from '@kosong/toolset-simple';
import { checkArguments } from './argument-check.js';
import type { Ignore } from 'ignore';
import { constants, readFileSync } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PathEscapeError, confine } from './workspace-path.js';

/** Matching lines `grep` reports at most. */
export const MAX_GREP_MATCHES = 500;
/** Paths `glob` lists at most. */
export const MAX_GLOB_PATHS = 1_000;
/** Files larger than this are not searched (5 MiB). */
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
/** A matching line is shown up to this many characters. */
const MAX_LINE_CHARS = 300;
/** Lines longer than this are searched in their first this many characters only (a bound on a regex's work per line). */
const MAX_SEARCHED_LINE_CHARS = 10_000;

/** The `.gitignore` rules of a tree, read as directories are walked. */
class GitignoreRules {
  readonly #byDirectory = new Map<string, Ignore | null>();

  constructor(
    private readonly root: string,
    private readonly ignore: () => Ignore,
  ) {}

  /** Whether `path` (absolute, below the root) is ignored by the `.gitignore` of the root or of a directory above it. */
  ignored(path: string, isDirectory: boolean): boolean {
    const segments = relative(this.root, path).split(sep);
    let directory = this.root;
    for (let i = 0; i < segments.length; i++) {
      const rules = this.#rulesOf(directory);
      if (rules !== null) {
        const below = segments.slice(i).join('/');
        if (rules.ignores(isDirectory ? `${below}/` : below)) return true;
      }
      directory = join(directory, segments[i]!);
    }
    return false;
  }

  #rulesOf(directory: string): Ignore | null {
    let rules = this.#byDirectory.get(directory);
    if (rules === undefined) {
      try {
        rules = this.ignore().add(readFileSync(join(directory, '.gitignore'), 'utf8'));
      } catch {
        rules = null; // none (or unreadable: nothing is ignored for it)
      }
      this.#byDirectory.set(directory, rules);
    }
    return rules;
  }
}

/**
 * The files below `start` (inside `root`), as paths relative to `root` with `/` separators, sorted:
 * no symbolic links, nothing in `.git`, nothing a `.gitignore` ignores; `glob` filters them.
 */
async function workspaceFiles(root: string, start: string, glob: string | undefined, signal: AbortSignal): Promise<string[]> {
  const [{ fdir }, { default: ignore }, { default: picomatch }] = await Promise.all([import('fdir'), import('ignore'), import('picomatch')]);
  const rules = new GitignoreRules(root, ignore);
  const matches = glob === undefined ? undefined : picomatch(glob, { dot: true });
  const crawler = new fdir({ excludeSymlinks: true })
    .withFullPaths()
    .withAbortSignal(signal)
    .exclude((name, path) => name === '.git' || rules.ignored(path.endsWith(sep) ? path.slice(0, -1) : path, true))
    .filter((path, isDirectory) => !isDirectory && !rules.ignored(path, false));
  const files = await crawler.crawl(start).withPromise();
  const relativePaths = files.map((path) => relative(root, path).split(sep).join('/'));
  const wanted = matches === undefined ? relativePaths : relativePaths.filter((path) => matches(path) || matches(path.slice(path.lastIndexOf('/') + 1)));
  return wanted.sort();
}

/** The search tools of the working directory `cwd`. */
export function searchTools(cwd: string): CallableTool[] {
  const grep: CallableTool<GrepArgs> = {
    name: 'grep',
    description:
      'Searches the text files of the working directory (or of `path` in it) for a regular expression (JavaScript syntax), line by line, ' +
      '.gitignore honoured. Reports `file:line: text` for each matching line, at most 500.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'A regular expression' },
        path: { type: 'string', description: 'A directory or file relative to the working directory (default: all of it)' },
        glob: { type: 'string', description: 'Only files whose path (or name) matches this glob, e.g. *.ts or src/**/*.js' },
        ignore_case: { type: 'boolean', description: 'Match without regard to case (default false)' },
      },
      required: ['pattern'],
    },
    replay: 'safe',
    validate: (args) => checkArguments<GrepArgs>(args, { strings: ['pattern'], optionalStrings: ['path', 'glob'], booleans: ['ignore_case'] }),
    execute: (args, context) => searchOrRefuse(() => runGrep(cwd, args, context)),
  };
  const glob: CallableTool<GlobArgs> = {
    name: 'glob',
    description: 'Lists the files of the working directory (or of `path` in it) whose path or name matches a glob (e.g. **/*.ts), .gitignore honoured; at most 1000.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'A glob, e.g. *.md or src/**/*.test.ts' },
        path: { type: 'string', description: 'A directory relative to the working directory (default: all of it)' },
      },
      required: ['pattern'],
    },
    replay: 'safe',
    validate: (args) => checkArguments<GlobArgs>(args, { strings: ['pattern'], optionalStrings: ['path'] }),
    execute: (args, context) =>
      searchOrRefuse(async () => {
        const { root, start } = await searchRoot(cwd, args.path ?? '.');
        if (!(await lstat(start)).isDirectory()) return toolError({ message: `"${args.path ?? '.'}" is not a directory`, brief: 'Not a directory' });
        const files = await workspaceFiles(root, start, args.pattern, context.signal);
        const shown = files.slice(0, MAX_GLOB_PATHS);
        const more = files.length > shown.length ? `\n(${files.length - shown.length} more not listed)` : '';
        return toolOk({ output: shown.join('\n') + more, brief: `${files.length} ${files.length === 1 ? 'file' : 'files'} match ${args.pattern}` });
      }),
  };
  return [grep as CallableTool, glob as CallableTool];
}

interface GrepArgs {
  readonly pattern: string;
  readonly path?: string;
  readonly glob?: string;
  readonly ignore_case?: boolean;
}

interface GlobArgs {
  readonly pattern: string;
  readonly path?: string;
}

/** The real working directory and where a search starts in it (checked to be inside). */
async function searchRoot(cwd: string, path: string): Promise<{ readonly root: string; readonly start: string }> {
  const root = await realpath(cwd);
  const start = await confine(root, path);
  return { root, start };
}

async function runGrep(cwd: string, args: GrepArgs, context: ToolContext): Promise<ToolReturnValue> {
  let regex: RegExp;
  try {
    regex = new RegExp(args.pattern, args.ignore_case === true ? 'i' : '');
  } catch (error) {
    return toolError({ message: `The pattern is not a valid regular expression: ${(error as Error).message}`, brief: 'Bad pattern' });
  }
  const { root, start } = await searchRoot(cwd, args.path ?? '.');
  const files = await startFiles(root, start, args.glob, context.signal);
  const lines: string[] = [];
  let matched = 0;
  let filesWithMatches = 0;
  for (const file of files) {
    context.signal.throwIfAborted();
    const text = await searchableText(join(root, file));
    if (text === undefined) continue;
    let found = false;
    const fileLines = text.split('\n');
    for (let i = 0; i < fileLines.length; i++) {
      const line = fileLines[i]!;
      if (!regex.test(line.length > MAX_SEARCHED_LINE_CHARS ? line.slice(0, MAX_SEARCHED_LINE_CHARS) : line)) continue;
      found = true;
      matched++;
      if (lines.length < MAX_GREP_MATCHES) lines.push(`${file}:${i + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`);
    }
    if (found) filesWithMatches++;
  }
  const more = matched > lines.length ? `\n(${matched - lines.length} more matching lines not shown)` : '';
  const brief = `${matched} matching ${matched === 1 ? 'line' : 'lines'} in ${filesWithMatches} ${filesWithMatches === 1 ? 'file' : 'files'}`;
  return toolOk({ output: matched === 0 ? 'No matches.' : lines.join('\n') + more, brief });
}

/** The files a grep searches: those below `start`, or `start` itself when it is a file. */
async function startFiles(root: string, start: string, glob: string | undefined, signal: AbortSignal): Promise<string[]> {
  if (!(await lstat(start)).isDirectory()) return [relative(root, start).split(sep).join('/')];
  return workspaceFiles(root, start, glob, signal);
}

/** A file's text, if it is a regular file (not a link) of text, not over the size limit. */
async function searchableText(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // gone meanwhile, a link, unreadable
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_GREP_FILE_BYTES) return undefined;
    const bytes = await handle.readFile();
    if (bytes.subarray(0, 8192).includes(0)) return undefined; // binary
    return bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}

async function searchOrRefuse(run: () => Promise<ToolReturnValue>): Promise<ToolReturnValue> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof PathEscapeError) return toolError({ message: error.message, brief: 'Outside the working directory' });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return toolError({ message: 'The path to search does not exist', brief: 'Not found' });
    throw error;
  }
}
