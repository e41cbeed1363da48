/**
 * Names of everything this package keeps in Redis, in one place.
 *
 * Every key of one session (its history, lease, pending turns and the event streams of its turns)
 * shares one hash tag, so the Lua scripts that touch several of them also work on Redis Cluster.
 * BullMQ queue names never contain `:` (BullMQ refuses it); parts of names are percent-encoded.
 *
 * @module
 */

/** The default prefix of every key and queue of this package. */
export const DEFAULT_PREFIX = 'kosong';

/** The tenant part of names when a toolset or turn belongs to no tenant. */
export const NO_TENANT = '_';

/** Percent-encodes what would break a name: separators, hash-tag braces, `%` itself. */
export function encodeName(part: string): string {
  return part.replace(/[%:.{}\s/]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
}

/** The BullMQ queue serving the remote toolset `name` of a tenant (tenant isolation: one queue per tenant). */
export function toolQueueName(tenant: string | undefined, name: string): string {
  return `tools.${encodeName(tenant ?? NO_TENANT)}.${encodeName(name)}`;
}

/** The BullMQ queue of agent turns. */
export const TURN_QUEUE = 'turns';

/** Keys of a prefix that are not per session. */
export class GlobalKeys {
  constructor(readonly prefix: string = DEFAULT_PREFIX) {}

  /** Where a tool worker publishes the tools of its queue (JSON). */
  toolList(queue: string): string {
    return `${this.prefix}:toollist:${queue}`;
  }

  /** The pub/sub channel on which remote tool calls are cancelled. */
  toolCancelChannel(queue: string): string {
    return `${this.prefix}:toolcancel:${queue}`;
  }

  /** The tool jobs a step started (`queue\tjobId` members), so a recovered turn can cancel them. */
  stepJobs(stepId: string): string {
    return `${this.prefix}:stepjobs:{${encodeName(stepId)}}`;
  }

  /** The pub/sub channel on which turns are cancelled. */
  get turnCancelChannel(): string {
    return `${this.prefix}:turncancel`;
  }
}

/** The keys of one session; all share one hash tag. */
export class SessionKeys {
  /** The session's name in keys: `tenant/session`, each part percent-encoded (so it has one `/`). */
  readonly name: string;
  readonly tag: string;

  constructor(
    readonly prefix: string,
    readonly tenant: string | undefined,
    readonly session: string,
  ) {
    this.name = `${encodeName(tenant ?? NO_TENANT)}/${encodeName(session)}`;
    this.tag = `{${this.name}}`;
  }

  /** The messages (a list of JSON strings, one per message). */
  get history(): string {
    return `${this.prefix}:s:${this.tag}:history`;
  }

  /** Token count, running turn, its steps done and usage so far, id of its running step. */
  get meta(): string {
    return `${this.prefix}:s:${this.tag}:meta`;
  }

  /**
   * The call ledger of the open step: a list of JSON records (`callRecordToJSON`), a call's start
   * before it runs and its outcome when it settles; deleted by the append that adds the step.
   */
  get ledger(): string {
    return `${this.prefix}:s:${this.tag}:ledger`;
  }

  /** The lease: the fencing token of the worker allowed to write, with an expiry. */
  get owner(): string {
    return `${this.prefix}:s:${this.tag}:owner`;
  }

  /** The counter fencing tokens come from (only ever grows). */
  get fence(): string {
    return `${this.prefix}:s:${this.tag}:fence`;
  }

  /** The counter of submitted turns (submission order). */
  get seq(): string {
    return `${this.prefix}:s:${this.tag}:seq`;
  }

  /** The turns submitted and not yet finished, scored by submission order. */
  get pending(): string {
    return `${this.prefix}:s:${this.tag}:pending`;
  }

  /** The events of one turn (a stream), readable from the start. */
  events(turnId: string): string {
    return `${this.prefix}:s:${this.tag}:t:${encodeName(turnId)}:events`;
  }

  /** The state of one turn (a hash): submitted, cancel requested… */
  turn(turnId: string): string {
    return `${this.prefix}:s:${this.tag}:t:${encodeName(turnId)}`;
  }
}
