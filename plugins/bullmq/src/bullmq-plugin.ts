import { definePlugin, type Plugin } from '@kosong/core';
import { checkSecretOption, type ApprovalSecretOption } from './approval-signature.js';
import type { RedisConnection } from './connection.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { RemoteToolset, type RemoteToolsetOptions } from './remote-toolset.js';
import { TurnQueue } from './turn-queue.js';

/** Options of {@link bullmqPlugin}. */
export interface BullmqPluginOptions {
  readonly connection: RedisConnection;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /** The plugin's name in the kernel (default `bullmq`). */
  readonly name?: string;
  /** The approval secret {@link BullmqPlugin.turns} signs its decisions with (see `TurnQueueOptions.approvalSecret`). */
  readonly approvalSecret?: ApprovalSecretOption;
}

const PLUGIN_OPTIONS: KnownOptions<BullmqPluginOptions> = { connection: true, prefix: true, name: true, approvalSecret: true };

/** What {@link bullmqPlugin} gives: a kernel plugin, plus remote toolsets and a turn queue that live as long as the kernel. */
export interface BullmqPlugin extends Plugin {
  /**
   * A remote toolset of one tenant, for `kernel.tenants.define(tenant, { toolset })`: its calls go to
   * that tenant's queue only. Closed when the kernel is disposed.
   */
  remoteToolset(tenant: string | undefined, name: string, options?: Omit<RemoteToolsetOptions, 'connection' | 'prefix' | 'tenant' | 'name'>): Promise<RemoteToolset>;
  /** Submits and follows queued turns (opened on first use, closed when the kernel is disposed). */
  readonly turns: TurnQueue;
}

/**
 * A kernel plugin for kosong on BullMQ: remote toolsets for tenants, and a turn queue, all closed
 * with the kernel.
 *
 * @example
 * const bullmq = bullmqPlugin({ connection: 'redis://redis:6379' });
 * await kernel.use(bullmq);
 * kernel.tenants.define('acme', { toolset: await bullmq.remoteToolset('acme', 'files') });
 * const turn = await bullmq.turns.submit({ tenant: 'acme', session: 'chat-42', input: 'hello' });
 */
export function bullmqPlugin(options: BullmqPluginOptions): BullmqPlugin {
  checkKnownOptions('bullmqPlugin', options, PLUGIN_OPTIONS);
  checkSecretOption(options.approvalSecret, 'bullmqPlugin');
  const toolsets = new Set<RemoteToolset>();
  let turns: TurnQueue | undefined;
  let disposed = false;
  const plugin = definePlugin({
    name: options.name ?? 'bullmq',
    setup(ctx) {
      ctx.onDispose(async () => {
        disposed = true;
        await Promise.all([...toolsets].map((t) => t.close()));
        toolsets.clear();
        await turns?.close();
      });
    },
  });
  const checkOpen = (): void => {
    if (disposed) throw new Error(`Plugin "${plugin.name}": the kernel it belonged to is disposed`);
  };
  return Object.freeze({
    ...plugin,
    async remoteToolset(tenant: string | undefined, name: string, extra: Omit<RemoteToolsetOptions, 'connection' | 'prefix' | 'tenant' | 'name'> = {}) {
      checkOpen();
      const toolset = await RemoteToolset.connect({
        ...extra,
        connection: options.connection,
        name,
        ...(tenant === undefined ? {} : { tenant }),
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
      });
      toolsets.add(toolset);
      return toolset;
    },
    get turns() {
      checkOpen();
      turns ??= new TurnQueue({
        connection: options.connection,
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        ...(options.approvalSecret === undefined ? {} : { approvalSecret: options.approvalSecret }),
      });
      return turns;
    },
  });
}
