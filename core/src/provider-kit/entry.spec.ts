/**
 * `@kosong/core/provider-kit`: what it exports, and that it loads neither inversify nor zod (nor any
 * other package): the modules it imports, followed from its compiled entry, are core's own and
 * Node's.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';

import { importsOf } from '../test/module-imports.js';
import * as kit from './index.js';

describe('provider kit: the entry', () => {
  it('loads only core modules and Node built-ins: no inversify, no zod, no kernel, no runtime', () => {
    const { files, bare } = importsOf(fileURLToPath(new URL('./index.js', import.meta.url)));
    expect([...bare].filter((specifier) => !specifier.startsWith('node:'))).to.deep.equal([]);
    const lib = fileURLToPath(new URL('../', import.meta.url));
    const folders = new Set([...files].map((file) => file.slice(lib.length).split('/')[0]));
    for (const folder of folders) expect(['provider-kit', 'provider', 'message', 'tooling', 'error-marker.js', 'known-options.js'], 'a module of core it loads').to.include(folder);
    // Of the message model and the tools, only the merge rules, the parts and the arguments' parsing.
    const leaves = [...files].map((file) => file.slice(lib.length)).filter((file) => file.startsWith('message/') || file.startsWith('tooling/'));
    expect(leaves.sort()).to.deep.equal(['message/merge.js', 'message/parts.js', 'tooling/arguments.js']);
  });

  it('hands out the plumbing and the contract: the contract the very bindings the core root has, the helpers the root has not', async () => {
    for (const name of ['BaseChatProvider', 'EventStream', 'readEventStream', 'SseJsonDecoder', 'sdkErrorConverter', 'httpStatusError', 'generationForCall', 'credentialHeaderValues']) {
      expect(kit, name).to.have.property(name);
    }
    const root: Record<string, unknown> = await import('../index.js');
    for (const name of ['ChatProviderError', 'APIStatusError', 'InvalidGenerationOptionError', 'UnsupportedOutputError'] as const) {
      expect(kit[name], name).to.equal(root[name]);
    }
    for (const name of ['IdleTimer', 'scrubSecrets', 'resolveGenerationOptions', 'sameOriginRedirects', 'dropRest', 'mergePart', 'markError'] as const) {
      expect(kit, name).to.have.property(name);
      expect(root, name).to.not.have.property(name);
    }
  });

  it('credentialHeaderValues: the values of headers whose names say they carry a credential', () => {
    expect(kit.credentialHeaderValues({ 'api-key': 'a1', Authorization: 'Bearer b2', 'X-Auth-Token': 'c3', Cookie: 'd4', 'x-secret': 'e5', 'x-title': 'kosong' })).to.deep.equal([
      'a1',
      'Bearer b2',
      'c3',
      'd4',
      'e5',
    ]);
    expect(kit.credentialHeaderValues(undefined)).to.deep.equal([]);
  });
});
