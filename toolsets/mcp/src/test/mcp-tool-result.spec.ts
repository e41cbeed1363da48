import { expect } from 'chai';
import { audioURLPart, imageURLPart, textPart } from '@kosong/core';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import {
  convertMcpContent,
  convertMcpContentList,
  convertMcpToolResult,
  MCP_MAX_OUTPUT_CHARS,
  MCP_TOOL_ERROR_MESSAGE,
  base64Bytes,
  STRUCTURED_CONTENT_LABEL,
  truncationNote,
} from '../index.js';

const NOTE_100K =
  '\n\n[Output truncated: exceeded 100000 character limit. Use pagination or more specific queries to get remaining content.]';

describe('convertMcpContent: every MCP content type', () => {
  it('text → text part', () => {
    expect(convertMcpContent({ type: 'text', text: 'hi' })).to.deep.equal(textPart('hi'));
  });

  it('image → image part with a data: URL of its mime type', () => {
    expect(convertMcpContent({ type: 'image', data: 'AAAA', mimeType: 'image/png' })).to.deep.equal(imageURLPart('data:image/png;base64,AAAA'));
  });

  it('audio → audio part with a data: URL', () => {
    expect(convertMcpContent({ type: 'audio', data: 'BBBB', mimeType: 'audio/mpeg' })).to.deep.equal(audioURLPart('data:audio/mpeg;base64,BBBB'));
  });

  it('resource link → text keeping its name, URI, mime type and description (whatever the mime type)', () => {
    const link = (extra: object = {}): ContentBlock => ({ type: 'resource_link', uri: 'demo://resource/dynamic/text/2', name: 'Text Resource 2', ...extra });
    expect(convertMcpContent(link({ mimeType: 'text/plain', description: 'Resource 2' }))).to.deep.equal(
      textPart('[Resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain) — Resource 2]'),
    );
    expect(convertMcpContent(link({ mimeType: 'image/png' }))).to.deep.equal(textPart('[Resource link: Text Resource 2 <demo://resource/dynamic/text/2> (image/png)]'));
    expect(convertMcpContent(link())).to.deep.equal(textPart('[Resource link: Text Resource 2 <demo://resource/dynamic/text/2>]'));
  });

  it('embedded text resource → its text inline, after its URI and mime type', () => {
    const block: ContentBlock = { type: 'resource', resource: { uri: 'file:///n.txt', mimeType: 'text/plain', text: 'notes' } };
    expect(convertMcpContent(block)).to.deep.equal(textPart('[Resource file:///n.txt (text/plain)]\nnotes'));
    expect(convertMcpContent({ type: 'resource', resource: { uri: 'file:///n', text: '' } })).to.deep.equal(textPart('[Resource file:///n]\n'));
  });

  it('embedded image blob → image part within maxBlobBytes; larger → a text naming URI, mime type, size and the limit', () => {
    const blob = (mimeType: string, data = 'CCCC'): ContentBlock => ({ type: 'resource', resource: { uri: 'file:///x', mimeType, blob: data } });
    expect(convertMcpContent(blob('image/jpeg'))).to.deep.equal(imageURLPart('data:image/jpeg;base64,CCCC'));
    expect(convertMcpContent(blob('image/jpeg', 'AAAAAAAA'), { maxBlobBytes: 5 })).to.deep.equal(
      textPart('[Resource file:///x (image/jpeg, 6 bytes): larger than the 5-byte limit]'),
    );
    expect(convertMcpContent(blob('image/jpeg', 'AAAAAAAA'), { maxBlobBytes: 6 })).to.deep.equal(imageURLPart('data:image/jpeg;base64,AAAAAAAA'));
  });

  it('embedded blob of a textual type within maxBlobBytes and valid UTF-8 → its text inline; otherwise a short text', () => {
    const blob = (mimeType: string, text: string): ContentBlock => ({ type: 'resource', resource: { uri: 'demo://b', mimeType, blob: Buffer.from(text).toString('base64') } });
    expect(convertMcpContent(blob('text/plain', 'héllo'))).to.deep.equal(textPart('[Resource demo://b (text/plain)]\nhéllo'));
    expect(convertMcpContent(blob('application/json', '{"a":1}'))).to.deep.equal(textPart('[Resource demo://b (application/json)]\n{"a":1}'));
    expect(convertMcpContent(blob('application/ld+json; charset=utf-8', '{}'))).to.deep.equal(textPart('[Resource demo://b (application/ld+json; charset=utf-8)]\n{}'));
    expect(convertMcpContent(blob('text/plain', 'abcdef'), { maxBlobBytes: 5 })).to.deep.equal(textPart('[Resource demo://b (text/plain, 6 bytes): larger than the 5-byte limit]'));
    const invalid: ContentBlock = { type: 'resource', resource: { uri: 'demo://b', mimeType: 'text/plain', blob: Buffer.from([0xff, 0xfe]).toString('base64') } };
    expect(convertMcpContent(invalid)).to.deep.equal(textPart('[Resource demo://b (text/plain, 2 bytes): binary content not shown]'));
  });

  it('embedded blob of another (or no) mime type → a short text naming URI, mime type and size, never the bytes', () => {
    expect(convertMcpContent({ type: 'resource', resource: { uri: 'file:///a.pdf', mimeType: 'application/pdf', blob: 'QUJDRA==' } })).to.deep.equal(
      textPart('[Resource file:///a.pdf (application/pdf, 4 bytes): binary content not shown]'),
    );
    expect(convertMcpContent({ type: 'resource', resource: { uri: 'file:///v.mp4', mimeType: 'video/mp4', blob: 'QUI=' } })).to.deep.equal(
      textPart('[Resource file:///v.mp4 (video/mp4, 2 bytes): binary content not shown]'),
    );
    expect(convertMcpContent({ type: 'resource', resource: { uri: 'file:///x', blob: 'QUJD' } })).to.deep.equal(
      textPart('[Resource file:///x (no mime type, 3 bytes): binary content not shown]'),
    );
  });

  it('a block of an unknown type → "Unsupported content" with its type name only (never its contents)', () => {
    expect(convertMcpContent({ type: 'hologram', secret: 'x'.repeat(50) } as unknown as ContentBlock)).to.deep.equal(textPart('[Unsupported content: hologram]'));
    expect(convertMcpContent({ notype: 1 } as unknown as ContentBlock)).to.deep.equal(textPart('[Unsupported content: a block without a type (object)]'));
  });

  it('base64Bytes: the decoded size, padding excluded', () => {
    expect([base64Bytes(''), base64Bytes('QQ=='), base64Bytes('QUI='), base64Bytes('QUJD'), base64Bytes('QUJDRA==')]).to.deep.equal([0, 1, 2, 3, 4]);
  });
});

describe('convertMcpContentList (output budget)', () => {
  it('keeps everything, in order, within the budget', () => {
    const parts = convertMcpContentList([
      { type: 'text', text: 'a' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'text', text: 'b' },
    ]);
    expect(parts).to.deep.equal([textPart('a'), imageURLPart('data:image/png;base64,AAAA'), textPart('b')]);
  });

  it('turns an unknown block into a text note and keeps going', () => {
    const parts = convertMcpContentList([{ type: 'hologram' } as unknown as ContentBlock, { type: 'text', text: 'after' }]);
    expect(parts).to.deep.equal([textPart('[Unsupported content: hologram]'), textPart('after')]);
  });

  it('cuts the text that crosses the budget, drops later text and appends the note', () => {
    const parts = convertMcpContentList([
      { type: 'text', text: 'x'.repeat(60_000) },
      { type: 'text', text: 'y'.repeat(60_000) },
      { type: 'text', text: 'z' },
    ]);
    expect(parts.map((p) => (p.type === 'text' ? p.text.length : -1))).to.deep.equal([60_000, 40_000, NOTE_100K.length]);
    expect(parts[1]).to.deep.equal(textPart('y'.repeat(40_000)));
    expect(parts[2]).to.deep.equal(textPart(NOTE_100K));
  });

  it('exactly the budget is not truncated', () => {
    const parts = convertMcpContentList([{ type: 'text', text: 'x'.repeat(MCP_MAX_OUTPUT_CHARS) }]);
    expect(parts).to.have.length(1);
  });

  it('drops a media part whose URL does not fit (a data: URL cannot be cut), but keeps smaller later ones', () => {
    const bigImage = 'A'.repeat(99_990);
    const parts = convertMcpContentList([
      { type: 'text', text: 'x'.repeat(50) },
      { type: 'image', data: bigImage, mimeType: 'image/png' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
    ]);
    expect(parts).to.deep.equal([textPart('x'.repeat(50)), imageURLPart('data:image/png;base64,AAAA'), textPart(NOTE_100K)]);
  });

  it('counts media URLs against the budget shared with text', () => {
    const url = 'data:image/png;base64,' + 'A'.repeat(1000);
    const parts = convertMcpContentList(
      [
        { type: 'image', data: 'A'.repeat(1000), mimeType: 'image/png' },
        { type: 'text', text: 'x'.repeat(100) },
      ],
      { maxOutputChars: url.length + 10 },
    );
    expect(parts).to.deep.equal([imageURLPart(url), textPart('x'.repeat(10)), textPart(truncationNote(url.length + 10))]);
  });

  it('never splits a surrogate pair when cutting', () => {
    const parts = convertMcpContentList([{ type: 'text', text: 'ab😀cd' }], { maxOutputChars: 3 });
    expect(parts[0]).to.deep.equal(textPart('ab'));
  });

  it('counts an embedded text resource against the budget like any text', () => {
    const block: ContentBlock = { type: 'resource', resource: { uri: 'file:///n.txt', text: 'n'.repeat(200) } };
    const parts = convertMcpContentList([block], { maxOutputChars: 50 });
    expect(parts).to.have.length(2);
    expect((parts[0] as { text: string }).text).to.have.length(50);
    expect(parts[1]).to.deep.equal(textPart(truncationNote(50)));
  });

  it('gives structured content as JSON when there is no content', () => {
    expect(convertMcpContentList([], {}, { temperature: 21 })).to.deep.equal([textPart('{"temperature":21}')]);
    expect(convertMcpContentList([])).to.deep.equal([]);
  });

  it('gives structured content beside the text, unless a text block already is that JSON', () => {
    expect(convertMcpContentList([{ type: 'text', text: 'shown' }], {}, { temperature: 21 })).to.deep.equal([
      textPart('shown'),
      textPart(`${STRUCTURED_CONTENT_LABEL}{"temperature":21}`),
    ]);
    expect(STRUCTURED_CONTENT_LABEL).to.equal('Structured content: ');
    // the spec asks servers to send the JSON as text too: then it is not given twice (key order does not matter)
    expect(convertMcpContentList([{ type: 'text', text: ' {"b":2, "a":1}' }], {}, { a: 1, b: 2 })).to.deep.equal([textPart(' {"b":2, "a":1}')]);
    expect(convertMcpContentList([{ type: 'text', text: '{"a":1}' }], {}, { a: 2 })).to.have.length(2);
  });
});

describe('convertMcpToolResult', () => {
  it('a successful result is a successful return value with the converted parts', () => {
    const value = convertMcpToolResult({ content: [{ type: 'text', text: 'ok' }] });
    expect(value).to.deep.equal({ isError: false, output: [textPart('ok')], message: '', display: [] });
  });

  it('isError gives an error return value with the spec message, no brief, and the content as output', () => {
    const value = convertMcpToolResult({ isError: true, content: [{ type: 'text', text: 'disk full' }] });
    expect(value).to.deep.equal({ isError: true, output: [textPart('disk full')], message: MCP_TOOL_ERROR_MESSAGE, display: [] });
    expect(MCP_TOOL_ERROR_MESSAGE).to.equal('Tool returned an error. The output may be error message or incomplete output');
  });
});
