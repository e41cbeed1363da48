import { expect } from 'chai';
import { formatSize } from '../format-size.js';
import { OutputCapture } from '../tools/output-capture.js';

describe('OutputCapture', () => {
  it('keeps everything while it fits', () => {
    const capture = new OutputCapture(8, 8);
    for (const part of ['hello ', 'wor', 'ld!']) capture.write(Buffer.from(part));
    expect([capture.text(), capture.total, capture.cut]).to.deep.equal(['hello world!', 12, 0]);
  });

  it('keeps the first and last bytes and says how many were cut between them, whatever the chunk sizes', () => {
    const text = Array.from({ length: 5_000 }, (_, i) => `line ${i}\n`).join('');
    for (const size of [1, 7, 4096, text.length]) {
      const capture = new OutputCapture(100, 200);
      for (let at = 0; at < text.length; at += size) capture.write(Buffer.from(text.slice(at, at + size)));
      const cut = text.length - 300;
      expect(capture.cut, `chunks of ${size}`).to.equal(cut);
      expect(capture.text(), `chunks of ${size}`).to.equal(
        `${text.slice(0, 100)}\n[… ${formatSize(cut)} (${cut.toLocaleString('en')} bytes) of output cut …]\n${text.slice(-200)}`,
      );
    }
  });

  it('holds no more than head + tail + one chunk, however much is written', () => {
    const capture = new OutputCapture(1024, 1024);
    const chunk = Buffer.alloc(64 * 1024, 'y');
    for (let i = 0; i < 2_000; i++) capture.write(chunk);
    const held = (capture as unknown as { tail: Buffer[] }).tail.reduce((sum, b) => sum + b.length, 0);
    expect(held).to.be.at.most(1024 + chunk.length);
    expect(capture.total).to.equal(2_000 * chunk.length);
    expect(capture.text().length).to.be.below(2_200);
  });
});

describe('formatSize', () => {
  it('says the unit', () => {
    expect([0, 1, 1023, 1024, 1536, 300_000, 262_144, 12_912_123, 5 * 1024 ** 3].map(formatSize)).to.deep.equal([
      '0 bytes',
      '1 byte',
      '1023 bytes',
      '1 KiB',
      '1.5 KiB',
      '293 KiB',
      '256 KiB',
      '12.3 MiB',
      '5 GiB',
    ]);
  });
});
