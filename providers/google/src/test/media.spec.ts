import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { audioURLPart, ChatProviderError, createMessage, imageURLPart, textPart, toolCall, videoURLPart, type ContentPart, type Message } from '@kosong/core';
import { expect } from 'chai';

import { write } from '../testing/index.js';
import { closedWithin, collect, rejection, useServer } from './support.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const MiB = 1024 * 1024;

interface MediaRequest {
  readonly path: string;
  readonly closed: Promise<'completed' | 'aborted'>;
}

/** A local media server: what image URLs in a history point to, with every way a download can go wrong. */
class MediaServer {
  readonly requests: MediaRequest[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<MediaServer> {
    const server = createServer();
    const media = new MediaServer(server);
    server.on('request', (request, response: ServerResponse) => {
      const closed = new Promise<'completed' | 'aborted'>((resolve) => response.once('close', () => resolve(response.writableFinished ? 'completed' : 'aborted')));
      media.requests.push({ path: request.url ?? '', closed });
      void media.answer(request.url ?? '', response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return media;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async answer(path: string, response: ServerResponse): Promise<void> {
    switch (path) {
      case '/cat.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
        return;
      case '/voice':
        response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(Buffer.from('ID3fake-mp3'));
        return;
      case '/octet/photo.JPG':
        response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0xff, 0xd8, 0xff]));
        return;
      case '/vector.svg':
        response.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg/>');
        return;
      case '/login':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html>Please sign in</html>');
        return;
      case '/missing':
        response.writeHead(404, { 'content-type': 'text/plain' }).end('no such image');
        return;
      case '/hang':
        return; // never answers
      case '/declared-gigabyte':
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(1024 * MiB) });
        await write(response, Buffer.alloc(64 * 1024));
        return; // and then nothing
      case '/gigabyte': {
        // 1 GiB, chunked (no length), unless the client goes away first
        response.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(MiB, 7);
        for (let sent = 0; sent < 1024; sent++) if (!(await write(response, chunk))) return;
        response.end();
        return;
      }
      default:
        response.writeHead(500).end();
    }
  }
}

const withImage = (url: string): Message[] => [createMessage('user', [textPart('What is this?'), imageURLPart(url)])];

describe('Gemini media parts', () => {
  const ctx = useServer();
  let media: MediaServer;
  beforeEach(async () => {
    media = await MediaServer.start();
  });
  afterEach(async () => {
    await media.close();
  });

  const partsOf = async (content: readonly ContentPart[], options: Parameters<typeof ctx.provider>[0] = {}): Promise<unknown[]> => {
    await collect(await ctx.provider(options).generate('', [], [createMessage('user', content)]));
    return (ctx.server.lastRequest.body as { contents: { parts: unknown[] }[] }).contents[0]!.parts;
  };
  const refusal = async (history: readonly Message[], options: Parameters<typeof ctx.provider>[0] = {}): Promise<string> => {
    const error = await rejection(ctx.provider(options).generate('', [], history));
    expect(ChatProviderError.isInstance(error), String(error)).to.equal(true);
    expect(ctx.server.requests, 'nothing is sent to Gemini').to.have.length(0);
    return (error as Error).message;
  };

  describe('data URLs', () => {
    it('images and audio go inline; common type aliases are normalised', async () => {
      expect(await partsOf([imageURLPart(`data:image/png;base64,${PNG.toString('base64')}`), audioURLPart('data:audio/mpeg;base64,SUQz'), imageURLPart('data:image/jpg;base64,/9j/')])).to.deep.equal([
        { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } },
        { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
        { inlineData: { mimeType: 'image/jpeg', data: '/9j/' } },
      ]);
    });

    it('a data URL without base64, or of a type Gemini does not take: the original errors', async () => {
      expect(await refusal(withImage('data:image/png,rawbytes'))).to.equal('Invalid data URL for image: data:image/png,rawbytes');
      expect(await refusal(withImage('data:image/svg+xml;base64,PHN2Zy8+'))).to.equal(
        'Unsupported media type for base64 image: image/svg+xml, url: data:image/svg+xml;base64,PHN2Zy8+',
      );
      expect(await refusal([createMessage('user', [audioURLPart('data:audio/midi;base64,TVRoZA==')])])).to.match(
        /^Unsupported media type for base64 audio: audio\/midi, url: data:audio\/midi;base64,TVRoZA==\. Supported types: audio\/wav, audio\/mp3/,
      );
    });

    it('a huge data URL is cut short in the error message', async () => {
      const message = await refusal(withImage(`data:image/tiff;base64,${'A'.repeat(5 * MiB)}`));
      expect(message.length).to.be.below(300);
    });
  });

  describe('http(s) URLs, downloaded', () => {
    it('downloads an image and sends it inline with the served type; the same URL twice is downloaded once', async () => {
      const url = media.url('/cat.png');
      await collect(await ctx.provider().generate('', [], [createMessage('user', [imageURLPart(url)]), createMessage('assistant', 'A cat.'), createMessage('user', [imageURLPart(url), textPart('Again?')])]));
      const contents = (ctx.server.lastRequest.body as { contents: { parts: unknown[] }[] }).contents;
      const inline = { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } };
      expect(contents[0]!.parts).to.deep.equal([inline]);
      expect(contents[2]!.parts).to.deep.equal([inline, { text: 'Again?' }]);
      expect(media.requests.map((request) => request.path)).to.deep.equal(['/cat.png']);
    });

    it('audio too; a generic binary type falls back to the file extension', async () => {
      expect(await partsOf([audioURLPart(media.url('/voice')), imageURLPart(media.url('/octet/photo.JPG'))])).to.deep.equal([
        { inlineData: { mimeType: 'audio/mp3', data: Buffer.from('ID3fake-mp3').toString('base64') } },
        { inlineData: { mimeType: 'image/jpeg', data: '/9j/' } },
      ]);
    });

    it('a 404, an HTML login page or an image type Gemini does not take: a clear error naming the URL', async () => {
      expect(await refusal(withImage(media.url('/missing')))).to.equal(`Could not fetch the image at ${media.url('/missing')}: HTTP 404 Not Found`);
      expect(await refusal(withImage(media.url('/login')))).to.equal(`Could not fetch the image at ${media.url('/login')}: the server sent text/html, not an image`);
      expect(await refusal(withImage(media.url('/vector.svg')))).to.match(/: Gemini does not take images of type image\/svg\+xml \(it takes image\/png, image\/jpeg/);
    });

    it('a media server that hangs: an error after the timeout, and the download is closed', async () => {
      const started = Date.now();
      const message = await refusal(withImage(media.url('/hang')), { media: { timeoutMs: 200 } });
      expect(message).to.equal(`Could not fetch the image at ${media.url('/hang')}: no complete answer within 200 ms`);
      expect(Date.now() - started).to.be.below(2_000);
      expect(await closedWithin(media.requests[0]!.closed)).to.equal('aborted');
    });

    it('1 GiB without a length: stops reading at the cap, with an error, and closes the download', async () => {
      const started = Date.now();
      const message = await refusal(withImage(media.url('/gigabyte')), { media: { maxBytes: 4 * MiB } });
      expect(message).to.equal(`Could not fetch the image at ${media.url('/gigabyte')}: it is larger than the cap of ${4 * MiB} bytes`);
      expect(Date.now() - started).to.be.below(5_000);
      expect(await closedWithin(media.requests[0]!.closed)).to.equal('aborted');
    });

    it('1 GiB by its content-length: refused before reading the body (default cap 20 MiB)', async () => {
      const message = await refusal(withImage(media.url('/declared-gigabyte')));
      expect(message).to.equal(`Could not fetch the image at ${media.url('/declared-gigabyte')}: it is ${1024 * MiB} bytes, more than the cap of ${20 * MiB} bytes`);
      expect(await closedWithin(media.requests[0]!.closed)).to.equal('aborted');
    });

    it("the step's signal aborts a download: generate rejects with the reason, the download is closed", async () => {
      const controller = new AbortController();
      const pending = ctx.provider().generate('', [], withImage(media.url('/hang')), { signal: controller.signal });
      setTimeout(() => controller.abort('user cancelled'), 50);
      expect(await rejection(pending)).to.equal('user cancelled');
      expect(await closedWithin(media.requests[0]!.closed)).to.equal('aborted');
      expect(ctx.server.requests).to.have.length(0);
    });

    it('downloads run at once; the first failure stops the others', async () => {
      const started = Date.now();
      const message = await refusal([createMessage('user', [imageURLPart(media.url('/hang')), imageURLPart(media.url('/missing'))])]);
      expect(message).to.match(/\/missing: HTTP 404/);
      expect(Date.now() - started).to.be.below(2_000);
      expect(await closedWithin(media.requests.find((request) => request.path === '/hang')!.closed)).to.equal('aborted');
    });

    it("downloads go through the provider's fetch", async () => {
      const fetched: string[] = [];
      const recording: typeof fetch = (input, init) => {
        fetched.push(String(input));
        return fetch(input, init);
      };
      await partsOf([imageURLPart(media.url('/cat.png'))], { fetch: recording });
      expect(fetched[0]).to.equal(media.url('/cat.png'));
      expect(fetched[1]).to.match(/:streamGenerateContent\?alt=sse$/);
    });

    it('an unsupported URL scheme is refused', async () => {
      expect(await refusal(withImage('ftp://example.com/cat.png'))).to.equal('Unsupported image URL (only data:, http(s): and gs: URLs are): ftp://example.com/cat.png');
    });
  });

  describe('URLs the API reads itself', () => {
    it('with `urls: file-uri`, http(s) URLs go as fileData with a type from the extension (nothing downloaded)', async () => {
      expect(await partsOf([imageURLPart('https://example.com/a/cat.webp'), audioURLPart('https://example.com/talk')], { media: { urls: 'file-uri' } })).to.deep.equal([
        { fileData: { fileUri: 'https://example.com/a/cat.webp', mimeType: 'image/webp' } },
        { fileData: { fileUri: 'https://example.com/talk', mimeType: 'audio/mp3' } },
      ]);
      expect(media.requests).to.have.length(0);
    });

    it('gs:// URLs and Gemini Files API URLs always go as fileData', async () => {
      const file = 'https://generativelanguage.googleapis.com/v1beta/files/abc-123';
      expect(await partsOf([imageURLPart('gs://bucket/cat.png'), imageURLPart(file)])).to.deep.equal([
        { fileData: { fileUri: 'gs://bucket/cat.png', mimeType: 'image/png' } },
        { fileData: { fileUri: file, mimeType: 'image/png' } },
      ]);
    });
  });

  describe('in tool results', () => {
    it('images a tool returned go as parts of its functionResponse; video is refused anywhere', async () => {
      const history = [
        createMessage('user', 'Take a screenshot.'),
        createMessage('assistant', [], { toolCalls: [toolCall('c1', 'screenshot', '{}')] }),
        createMessage('tool', [textPart('Here it is.'), imageURLPart(media.url('/cat.png'))], { toolCallId: 'c1' }),
      ];
      await collect(await ctx.provider().generate('', [], history));
      const contents = (ctx.server.lastRequest.body as { contents: { parts: unknown[] }[] }).contents;
      expect(contents[2]!.parts).to.deep.equal([
        { functionResponse: { name: 'screenshot', response: { output: 'Here it is.' }, parts: [{ inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } }] } },
      ]);
      ctx.server.requests.length = 0;
      const video = [...history.slice(0, 2), createMessage('tool', [videoURLPart('https://example.com/clip.mp4')], { toolCallId: 'c1' })];
      expect(await refusal(video)).to.match(/does not support video parts \(video_url\)/);
    });
  });
});
