import { definePlugin, type ProviderPluginFactory } from '@kosong/core';
import { EchoChatProvider } from './echo-chat-provider.js';

/**
 * The providers of this package that programs such as the `kosong` CLI can offer by name:
 * `echo` streams back the echo DSL script it is sent as the last user message.
 */
export const providerPlugins: readonly ProviderPluginFactory[] = [
  {
    name: 'echo',
    description: 'offline: replies by playing the echo DSL script in your message (see @kosong/provider-echo)',
    create: () => definePlugin({ name: 'provider:echo', setup: (ctx) => ctx.bindChatProvider('echo', new EchoChatProvider(), { default: true }) }),
  },
];
