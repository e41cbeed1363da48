import { expect } from 'chai';

import { ChatProviderError, clientOf, readBodyStart } from './index.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A body of these chunks; `then` says how it goes on after them. */
function body(chunks: readonly string[], then: 'end' | 'hang' | 'fail' = 'end'): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < chunks.length) controller.enqueue(encode(chunks[index++]!));
      else if (then === 'end') controller.close();
      else if (then === 'fail') controller.error(new TypeError('terminated'));
      else return new Promise(() => undefined);
      return undefined;
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

describe('provider kit: clientOf', () => {
  class Client {}

  it('a client and none of the options that make one: the client', () => {
    const client = new Client();
    expect(clientOf({ client, timeoutMs: 5, maxRetries: 1 }, 'AcmeChatProvider', 'Acme')).to.equal(client);
  });

  it('a key and no client: none (the provider makes its own)', () => {
    expect(clientOf({ apiKey: 'k' }, 'AcmeChatProvider', 'Acme')).to.equal(undefined);
  });

  it('a client with options that make one, or neither a client nor a key: a ChatProviderError naming the provider', () => {
    expect(() => clientOf({ client: new Client(), apiKey: 'k', baseURL: 'x' }, 'AcmeChatProvider', 'Acme')).to.throw(
      ChatProviderError,
      'AcmeChatProvider: pass either `client` or `apiKey`, `baseURL`, not both',
    );
    expect(() => clientOf({}, 'AcmeChatProvider', 'Acme')).to.throw(ChatProviderError, 'AcmeChatProvider needs an `apiKey` (or an Acme `client`)');
    expect(() => clientOf({ apiKey: '' }, 'AcmeChatProvider', 'Acme')).to.throw(ChatProviderError, /needs an `apiKey`/);
  });
});

describe('provider kit: readBodyStart', () => {
  it('reads up to the cap, says whether there was more, and cancels the rest', async () => {
    const long = body(['<html>', 'x'.repeat(500), 'never read']);
    expect(await readBodyStart(long.stream, 100)).to.deep.equal({ text: `<html>${'x'.repeat(94)}`, more: true });
    expect(long.cancelled()).to.equal(true);
    expect(await readBodyStart(body(['short']).stream, 100)).to.deep.equal({ text: 'short', more: false });
    expect(await readBodyStart(null, 100)).to.deep.equal({ text: '', more: false });
  });

  it('a body that hangs: what arrived, after the timeout', async () => {
    const hanging = body(['partial '], 'hang');
    const started = Date.now();
    expect(await readBodyStart(hanging.stream, 1_000, 50)).to.deep.equal({ text: 'partial ', more: false });
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('a body whose read fails: what arrived', async () => {
    expect(await readBodyStart(body(['begin'], 'fail').stream, 1_000)).to.deep.equal({ text: 'begin', more: false });
  });
});
