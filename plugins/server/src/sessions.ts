import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';

import { LinearContext, type AgentContext } from '@kosong/core';

/**
 * Where the conversations of chats are kept. A chat is named by its tenant **and** its id: the same
 * id under two tenants is two chats, so no tenant can reach another's by guessing its id.
 */
export interface ChatSessions {
  /**
   * The conversation of chat `chatId` of `tenant`, restored: the same context for the same pair as
   * long as the sessions are open. `chatId` has passed {@link isValidChatId}.
   */
  open(tenant: string, chatId: string): Promise<AgentContext>;
  /**
   * The conversation of chat `chatId` of `tenant` if it exists (was opened, or is stored), else
   * `undefined`, creating nothing: what a read of a saved chat uses, so that guessing ids costs the
   * server nothing. Optional: without it, a read opens the chat.
   */
  peek?(tenant: string, chatId: string): Promise<AgentContext | undefined>;
  /** Closes every context opened (releasing their session files' locks). */
  close(): Promise<void>;
}

/**
 * Whether `id` may name a chat: 1 to 128 characters among letters, digits, `_`, `-` and `.`, not
 * starting with a dot. So it is a plain file name, never `.`, `..`, a hidden file or a path.
 */
export function isValidChatId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id);
}

/** Opens each context once per key, and closes all of them. */
abstract class CachedSessions implements ChatSessions {
  private readonly contexts = new Map<string, Promise<LinearContext>>();
  private closed = false;

  open(tenant: string, chatId: string): Promise<AgentContext> {
    if (this.closed) return Promise.reject(new Error('The chat sessions are closed'));
    if (!isValidChatId(chatId)) return Promise.reject(new TypeError(`Not a valid chat id: ${JSON.stringify(chatId)}`));
    const key = `${tenant}\u0000${chatId}`;
    let opening = this.contexts.get(key);
    if (opening === undefined) {
      opening = this.create(tenant, chatId);
      this.contexts.set(key, opening);
      opening.catch(() => this.contexts.delete(key)); // a failed open is tried again next time
    }
    return opening;
  }

  async peek(tenant: string, chatId: string): Promise<AgentContext | undefined> {
    if (this.contexts.has(`${tenant}\u0000${chatId}`)) return this.open(tenant, chatId);
    if (this.closed || !isValidChatId(chatId) || !(await this.stored(tenant, chatId))) return undefined;
    return this.open(tenant, chatId);
  }

  async close(): Promise<void> {
    this.closed = true;
    const opened = [...this.contexts.values()];
    this.contexts.clear();
    await Promise.all(opened.map(async (opening) => (await opening.catch(() => undefined))?.close()));
  }

  protected abstract create(tenant: string, chatId: string): Promise<LinearContext>;

  /** Whether the chat is stored though not open now. */
  protected abstract stored(tenant: string, chatId: string): Promise<boolean>;
}

class MemorySessions extends CachedSessions {
  protected create(): Promise<LinearContext> {
    return Promise.resolve(new LinearContext());
  }

  /** A chat in memory exists only while it is open. */
  protected stored(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

class DirectorySessions extends CachedSessions {
  private root: Promise<string> | undefined;

  constructor(private readonly directory: string) {
    super();
  }

  protected async create(tenant: string, chatId: string): Promise<LinearContext> {
    const root = await (this.root ??= this.makeRoot());
    const folder = join(root, tenantFolderName(tenant));
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const stats = await lstat(folder);
    if (stats.isSymbolicLink() || !stats.isDirectory()) throw new Error(`The session folder of tenant ${JSON.stringify(tenant)} is not a plain folder (a symbolic link?): refused`);
    // The chat id is a plain file name (isValidChatId): the path cannot leave the tenant's folder.
    const context = new LinearContext(join(folder, `${chatId}.jsonl`));
    await context.restore(); // refuses a session file that is a symbolic link, has other hard links or another owner
    return context;
  }

  /** Whether its session file is there (a name in the folder, whatever it is: opening it refuses what is no plain file). */
  protected async stored(tenant: string, chatId: string): Promise<boolean> {
    try {
      await lstat(join(this.directory, tenantFolderName(tenant), `${chatId}.jsonl`));
      return true;
    } catch {
      return false;
    }
  }

  private async makeRoot(): Promise<string> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    return realpath(this.directory);
  }
}

/** The folder of a tenant's sessions: `t-<the tenant id's UTF-8 in hex>`, or `h-<its SHA-256>` for a long id. */
function tenantFolderName(tenant: string): string {
  const bytes = Buffer.from(tenant, 'utf8');
  return bytes.length <= 100 ? `t-${bytes.toString('hex')}` : `h-${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * Sessions in memory: a `LinearContext` without a file per chat, gone when the process exits. It
 * grows with every chat and message while the process runs (nothing is evicted yet).
 */
export function memorySessions(): ChatSessions {
  return new MemorySessions();
}

/**
 * Sessions in a folder of JSONL files (the Python kosong format of `LinearContext`): chat `id` of
 * tenant `t` is `<directory>/t-<hex of t>/<id>.jsonl`, held with its lock file while the sessions are
 * open. The folder is created (mode 0700) if missing. A chat id is a plain file name
 * ({@link isValidChatId}), a tenant's folder that is a symbolic link is refused, and
 * `LinearContext` never opens a session file through a symbolic link: nothing is read or written
 * outside the folder.
 */
export function directorySessions(directory: string): ChatSessions {
  return new DirectorySessions(directory);
}
