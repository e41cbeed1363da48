import { expect } from 'chai';
import { audioURLPart, imageURLPart, textPart, videoURLPart } from '@kosong/core';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import {
  convertMcpContent,
  convertMcpContentList,
  convertMcpToolResult,
  MCP_MAX_OUTPUT_CHARS,
  MCP_TOOL_ERROR_MESSAGE,
  truncationNote,
  UnsupportedMcpContentError,
} from '../index.js';

const NOTE_100K =
  '\n\n[Output truncated: exceeded 100000 character limit. Use pagination or more specific queries to get remaining content.]';

function unsupported(block: ContentBlock): string {
  try {
    convertMcpContent(block);
  } catch (error) {
    expect(UnsupportedMcpContentError.isInstance(error), String(error)).to.equal(true);
    return (error as Error).message;
  }
  return expect.fail(`expected ${JSON.stringify(block)} to be unsupported`);
}

describe('convertMcpContent (spec §5.8 table)', () => {
  it('text → text part', () => {
    expect(convertMcpContent({ type: 'text', text: 'hi' })).to.deep.equal(textPart('hi'));
  });

  it('image → image part with a data: URL of its mime type', () => {
    expect(convertMcpContent({ type: 'image', data: 'AAAA', mimeType: 'image/png' })).to.deep.equal(imageURLPart('data:image/png;base64,AAAA'));
  });

  it('audio → audio part with a data: URL', () => {
    expect(convertMcpContent({ type: 'audio', data: 'BBBB', mimeType: 'audio/mpeg' })).to.deep.equal(audioURLPart('data:audio/mpeg;base64,BBBB'));
  });

  it('embedded blob resource → image, audio or video part by mime type', () => {
    const blob = (mimeType: string): ContentBlock => ({ type: 'resource', resource: { uri: 'file:///x', mimeType, blob: 'CCCC' } });
    expect(convertMcpContent(blob('image/jpeg'))).to.deep.equal(imageURLPart('data:image/jpeg;base64,CCCC'));
    expect(convertMcpContent(blob('audio/ogg'))).to.deep.equal(audioURLPart('data:audio/ogg;base64,CCCC'));
    expect(convertMcpContent(blob('video/mp4'))).to.deep.equal(videoURLPart('data:video/mp4;base64,CCCC'));
  });

  it('embedded blob resource of another (or no) mime type → unsupported mime type', () => {
    expect(unsupported({ type: 'resource', resource: { uri: 'file:///x', mimeType: 'application/pdf', blob: 'CCCC' } })).to.equal(
      'Unsupported mime type: application/pdf',
    );
    expect(unsupported({ type: 'resource', resource: { uri: 'file:///x', blob: 'CCCC' } })).to.equal('Unsupported mime type: application/octet-stream');
  });

  it('resource link → media part with the link URI, by mime type', () => {
    const link = (mimeType?: string): ContentBlock => ({ type: 'resource_link', uri: 'https://e.com/a', name: 'a', ...(mimeType ? { mimeType } : {}) });
    expect(convertMcpContent(link('image/png'))).to.deep.equal(imageURLPart('https://e.com/a'));
    expect(convertMcpContent(link('audio/wav'))).to.deep.equal(audioURLPart('https://e.com/a'));
    expect(convertMcpContent(link('video/webm'))).to.deep.equal(videoURLPart('https://e.com/a'));
    expect(unsupported(link('text/html'))).to.equal('Unsupported mime type: text/html');
    expect(unsupported(link())).to.equal('Unsupported mime type: application/octet-stream');
  });

  it('text resource → unsupported part, described as JSON', () => {
    const block: ContentBlock = { type: 'resource', resource: { uri: 'file:///n.txt', mimeType: 'text/plain', text: 'notes' } };
    expect(unsupported(block)).to.equal(`Unsupported MCP tool result part: ${JSON.stringify(block)}`);
  });

  it('a block of an unknown type → unsupported part', () => {
    expect(unsupported({ type: 'hologram' } as unknown as ContentBlock)).to.equal('Unsupported MCP tool result part: {"type":"hologram"}');
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

  it('turns unsupported blocks into a text note and keeps going', () => {
    const parts = convertMcpContentList([
      { type: 'resource_link', uri: 'https://e.com/page', name: 'page', mimeType: 'text/html' },
      { type: 'text', text: 'after' },
    ]);
    expect(parts).to.deep.equal([textPart('[Unsupported content: Unsupported mime type: text/html]'), textPart('after')]);
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

  it('counts the unsupported-content note against the budget like any text', () => {
    const block: ContentBlock = { type: 'resource', resource: { uri: 'file:///n.txt', text: 'n'.repeat(200) } };
    const parts = convertMcpContentList([block], { maxOutputChars: 50 });
    expect(parts).to.have.length(2);
    expect((parts[0] as { text: string }).text).to.have.length(50);
    expect(parts[1]).to.deep.equal(textPart(truncationNote(50)));
  });

  it('gives structured content as JSON when there is no content', () => {
    expect(convertMcpContentList([], {}, { temperature: 21 })).to.deep.equal([textPart('{"temperature":21}')]);
    expect(convertMcpContentList([{ type: 'text', text: 'shown' }], {}, { temperature: 21 })).to.deep.equal([textPart('shown')]);
    expect(convertMcpContentList([])).to.deep.equal([]);
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
