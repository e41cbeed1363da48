import { expect } from 'chai';
import sinon from 'sinon';

import { randomUUID } from '../random-uuid.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomUUID', () => {
  afterEach(() => sinon.restore());

  it('gives distinct lowercase version 4 UUIDs, across many refills of its random pool', () => {
    const ids = Array.from({ length: 5_000 }, () => randomUUID());
    for (const id of ids) expect(id).to.match(UUID_V4);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('sets the version and variant bits whatever the random bytes are, and uses every byte once', () => {
    const getBuiltinModule = process.getBuiltinModule.bind(process);
    let fill = 0;
    let refills = 0;
    sinon.stub(process, 'getBuiltinModule').callsFake(((id: string) => {
      if (id !== 'node:crypto') return getBuiltinModule(id as 'node:fs');
      return {
        randomFillSync: (pool: Uint8Array) => {
          refills++;
          // each byte its own value: the pool's bytes in order, so a reused or skipped byte shows
          for (let i = 0; i < pool.length; i++) pool[i] = (fill + i) & 0xff;
          return pool;
        },
      };
    }) as typeof process.getBuiltinModule);
    // Draw until the pool is refilled with the stub's bytes, then read the next ids.
    fill = 0xf0;
    let id = randomUUID();
    while (refills === 0) id = randomUUID();
    const first = id;
    const second = randomUUID();
    expect(first).to.equal('f0f1f2f3-f4f5-46f7-b8f9-fafbfcfdfeff');
    expect(second).to.equal('00010203-0405-4607-8809-0a0b0c0d0e0f');
    expect([first, second]).to.satisfy((ids: string[]) => ids.every((x) => UUID_V4.test(x)));
  });
});
