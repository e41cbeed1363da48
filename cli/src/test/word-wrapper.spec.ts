import { expect } from 'chai';
import fc from 'fast-check';
import { WordWrapper, wrapText } from '../render/word-wrapper.js';

/** Streams `chunks` through a wrapper of `width` columns and returns everything written. */
function stream(chunks: readonly string[], width: number | undefined, indent = ''): string {
  const wrapper = new WordWrapper(() => width, indent);
  return chunks.map((chunk) => wrapper.push(chunk)).join('') + wrapper.flush();
}

describe('WordWrapper', () => {
  it('breaks between words, dropping the spaces at the break', () => {
    expect(stream(['the quick brown fox jumps'], 10)).to.equal('the quick\nbrown fox\njumps');
  });

  it('gives the same lines whatever the chunks, a word held until it is complete', () => {
    const wrapper = new WordWrapper(() => 10);
    expect(wrapper.push('the qu')).to.equal('the');
    expect(wrapper.push('ick bro')).to.equal(' quick');
    expect(wrapper.push('wn')).to.equal('');
    expect(wrapper.flush()).to.equal('\nbrown');
  });

  it('cuts a word longer than a line at the width', () => {
    expect(stream(['ab abcdefghijklmnopqrstuvwxyz cd'], 10)).to.equal('ab\nabcdefghij\nklmnopqrst\nuvwxyz cd');
  });

  it('keeps line breaks of the text, and the spaces that start a line', () => {
    expect(stream(['one two\n  three four five'], 12)).to.equal('one two\n  three four\nfive');
  });

  it('drops the spaces that start a line rather than cut a word that fits a line', () => {
    expect(stream(['a \n aaaa a'], 4)).to.equal('a\naaaa\na');
  });

  it('indents the lines it starts', () => {
    expect(wrapText('aaa bbb ccc ddd', 8, '  ')).to.equal('aaa bbb\n  ccc\n  ddd');
  });

  it('passes text through unchanged without a width', () => {
    expect(stream(['a  b ', '\n', 'c   '], undefined)).to.equal('a  b \nc   ');
  });

  it('never writes a line longer than the width, and keeps every word in order (any text, any chunks)', () => {
    const word = fc.stringMatching(/^[a-z]{1,25}$/);
    const gap = fc.constantFrom(' ', '  ', '\n', ' \n ');
    fc.assert(
      fc.property(fc.array(fc.tuple(word, gap), { minLength: 1, maxLength: 40 }), fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 7 }), (pairs, width, cut) => {
        const text = pairs.map(([w, g]) => w + g).join('');
        const chunks = text.match(new RegExp(`[\\s\\S]{1,${cut}}`, 'g')) ?? [];
        const out = stream(chunks, width);
        for (const line of out.split('\n')) expect(line.length, JSON.stringify(out)).to.be.at.most(width);
        // Words may only be cut where they are longer than a line.
        expect(out.replace(/\s+/g, '')).to.equal(text.replace(/\s+/g, ''));
        for (const [w] of pairs) if (w.length <= width) expect(out.split(/\s+/)).to.include(w);
      }),
    );
  });
});
