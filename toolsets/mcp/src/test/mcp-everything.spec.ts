/**
 * McpToolset against `@modelcontextprotocol/server-everything`, the reference server that exercises
 * the whole protocol, started by the tests over stdio and over streamable HTTP: content of every
 * kind, the client's capabilities (roots, sampling, elicitation), progress and log notifications,
 * resources, prompts and completion, and a task-only tool run through the task API.
 */
import { expect } from 'chai';
import { imageURLPart, textPart, type ContentPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import {
  McpRequestError,
  McpToolset,
  mcpPromptMessages,
  mcpResourceParts,
  type McpElicitationRequest,
  type McpLogEvent,
  type McpProgressEvent,
  type McpResourceUpdatedEvent,
  type McpSamplingRequest,
  type McpServerConfig,
  type McpToolsetOptions,
} from '../index.js';
import { callTool, everythingStdio, killLeftovers, startEverythingHttp, textOf, waitFor, type HttpFixture } from './support.js';

function texts(output: string | readonly ContentPart[]): string[] {
  return typeof output === 'string' ? [output] : output.map((part) => (part.type === 'text' ? part.text : `<${part.type}>`));
}

describe('McpToolset against server-everything', function () {
  this.timeout(20_000);
  let http: HttpFixture;
  const opened: McpToolset[] = [];

  async function open(server: McpServerConfig, options: Omit<McpToolsetOptions, 'server'> = {}): Promise<McpToolset> {
    const toolset = new McpToolset({ name: 'everything', server, ...options });
    opened.push(toolset);
    await toolset.connect();
    return toolset;
  }

  before(async () => {
    http = await startEverythingHttp();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });

  after(async () => {
    await http?.kill();
    expect(killLeftovers(), 'server-everything processes left alive').to.deep.equal([]);
  });

  for (const kind of ['stdio', 'http'] as const) {
    describe(`over ${kind}`, () => {
      const server = (): McpServerConfig => (kind === 'stdio' ? everythingStdio() : http.config);

      describe('content', () => {
        let everything: McpToolset;
        before(async () => {
          everything = new McpToolset({ name: 'everything', server: server() });
          await everything.connect();
        });
        after(() => everything?.close());

        it('resource links keep their URI, name and mime type (no "Unsupported")', async () => {
          const { returnValue } = await callTool(everything, 'get-resource-links', { count: 2 });
          expect(returnValue.isError).to.equal(false);
          expect(texts(returnValue.output)).to.deep.equal([
            'Here are 2 resource links to resources available in this server:',
            '[Resource link: Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain) — Resource 1: plaintext resource]',
            '[Resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain) — Resource 2: plaintext resource]',
          ]);
        });

        it('an embedded text resource comes inline, and so does an embedded blob of a text type (decoded), with its URI', async () => {
          const textual = await callTool(everything, 'get-resource-reference', { resourceType: 'Text', resourceId: 3 });
          const textParts = texts(textual.returnValue.output);
          const embedded = textParts.find((t) => t.startsWith('[Resource demo://resource/dynamic/text/3 (text/plain)]\n'));
          expect(embedded, textParts.join('\n')).to.match(/Resource 3: This is a plaintext resource/);
          expect(textParts.join('\n')).not.to.contain('Unsupported');

          const binary = await callTool(everything, 'get-resource-reference', { resourceType: 'Blob', resourceId: 3 });
          const blobText = texts(binary.returnValue.output).find((t) => t.startsWith('[Resource demo://resource/dynamic/blob/3'));
          // its blob is base64 of text/plain: decoded and inline
          expect(blobText).to.match(/^\[Resource demo:\/\/resource\/dynamic\/blob\/3 \(text\/plain\)\]\nResource 3: This is a base64 blob created at /);
        });

        it('annotated content: the text and the image, annotations not shown', async () => {
          const { returnValue } = await callTool(everything, 'get-annotated-message', { messageType: 'error', includeImage: true });
          const output = returnValue.output as readonly ContentPart[];
          expect(output[0]).to.deep.equal(textPart('Error: Operation failed'));
          expect(output[1]?.type).to.equal('image_url');
          expect((output[1] as { imageUrl: { url: string } }).imageUrl.url).to.match(/^data:image\/png;base64,iVBOR/);
        });

        it('structured content: given once (the server also sends it as JSON text)', async () => {
          const { returnValue } = await callTool(everything, 'get-structured-content', { location: 'Chicago' });
          const output = texts(returnValue.output);
          expect(output).to.have.length(1);
          expect(JSON.parse(output[0]!)).to.have.keys(['temperature', 'conditions', 'humidity']);
        });

        it('a tiny image between texts', async () => {
          const { returnValue } = await callTool(everything, 'get-tiny-image');
          expect(texts(returnValue.output)).to.deep.equal(["Here's the image you requested:", '<image_url>', 'The image above is the MCP logo.']);
        });
      });

      describe('client capabilities', () => {
        it('roots: the server lists the roots given; setRoots notifies it and it lists them again', async () => {
          const everything = await open(server(), { roots: [{ uri: 'file:///work/project', name: 'project' }] });
          expect(everything.tools.map((t) => t.name)).to.include('get-roots-list');
          // the server asks for roots after the handshake: wait until it has them
          await waitFor('the first roots', async () => textOf((await callTool(everything, 'get-roots-list')).returnValue).includes('file:///work/project'), 5000);
          await everything.setRoots([{ uri: 'file:///work/other', name: 'other' }, { uri: 'file:///tmp' }]);
          const listed = await waitFor(
            'the new roots',
            async () => {
              const text = textOf((await callTool(everything, 'get-roots-list')).returnValue);
              return text.includes('(2 total)') && text;
            },
            5000,
          );
          expect(listed).to.contain('file:///work/other').and.contain('file:///tmp').and.not.contain('file:///work/project');
        });

        it('roots: not announced without the option (no get-roots-list tool); setRoots is then a TypeError', async () => {
          const everything = await open(server());
          expect(everything.tools.map((t) => t.name)).not.to.include('get-roots-list');
          try {
            await everything.setRoots([{ uri: 'file:///x' }]);
            expect.fail('setRoots was accepted');
          } catch (error) {
            expect(error).to.be.instanceOf(TypeError);
          }
        });

        it('sampling: answered by the provider after the approval callback said yes', async () => {
          const provider = new MockChatProvider([textPart('Paris is the capital.')]);
          const asked: McpSamplingRequest[] = [];
          const everything = await open(server(), {
            sampling: { provider, approve: (request) => (asked.push(request), true), maxTokens: 50 },
          });
          const { returnValue } = await callTool(everything, 'trigger-sampling-request', { prompt: 'Capital of France?', maxTokens: 80 });
          expect(returnValue.isError).to.equal(false);
          const text = textOf(returnValue);
          expect(text).to.contain('LLM sampling result');
          expect(text).to.contain('Paris is the capital.').and.contain('"model": "mock"');
          expect(asked).to.have.length(1);
          expect(asked[0]!.server).to.equal('everything');
          expect(asked[0]!.params.maxTokens).to.equal(80);
          expect(asked[0]!.history[0]!.role).to.equal('user');
          expect(asked[0]!.history[0]!.content[0]).to.deep.include({ type: 'text' });
          expect((asked[0]!.history[0]!.content[0] as { text: string }).text).to.contain('Capital of France?');
          // the provider got the request, with the cap on maxTokens
          expect(provider.requests.at(-1)?.generation).to.deep.include({ maxOutputTokens: 50 });
        });

        it('sampling: refused with an MCP error when the callback says no, or when there is none; the provider is not called', async () => {
          const provider = new MockChatProvider([textPart('never')]);
          const refusing = await open(server(), { sampling: { provider, approve: () => false } });
          const refused = await callTool(refusing, 'trigger-sampling-request', { prompt: 'spend tokens' });
          expect(refused.returnValue.isError).to.equal(true);
          expect(JSON.stringify(refused.returnValue)).to.contain('the client refused the sampling request (not approved)');

          const unasked = await open(server(), { sampling: { provider } });
          const noHandler = await callTool(unasked, 'trigger-sampling-request', { prompt: 'spend tokens' });
          expect(noHandler.returnValue.isError).to.equal(true);
          expect(JSON.stringify(noHandler.returnValue)).to.contain('no approval handler (sampling.approve)');
          expect(provider.requests).to.have.length(0);
        });

        it('sampling: not announced without the option (the server offers no sampling tool)', async () => {
          const everything = await open(server());
          expect(everything.tools.map((t) => t.name)).not.to.include('trigger-sampling-request');
        });

        it('elicitation: the handler answers (accepted content goes back to the server)', async () => {
          const asked: McpElicitationRequest[] = [];
          const everything = await open(server(), {
            elicitation: (request) => {
              asked.push(request);
              return { action: 'accept', content: { name: 'Ada Lovelace' } };
            },
          });
          const { returnValue } = await callTool(everything, 'trigger-elicitation-request');
          expect(textOf(returnValue)).to.contain('User provided the requested information').and.contain('Ada Lovelace');
          expect(asked).to.have.length(1);
          expect(asked[0]!.params).to.deep.include({ message: 'Please provide inputs for the following fields:' });
        });

        it('elicitation: declined without a handler', async () => {
          const everything = await open(server());
          const { returnValue } = await callTool(everything, 'trigger-elicitation-request');
          expect(textOf(returnValue)).to.contain('User declined to provide the requested information');
        });

        it('progress: each notification of a long-running call reaches onProgress, naming the tool and the call', async () => {
          const events: McpProgressEvent[] = [];
          const everything = await open(server(), { onProgress: (event) => events.push(event) });
          const { toolCallId, returnValue } = await callTool(everything, 'trigger-long-running-operation', { duration: 0.3, steps: 3 });
          expect(textOf(returnValue)).to.contain('Long running operation completed');
          expect(events.map((e) => [e.progress, e.total])).to.deep.equal([
            [1, 3],
            [2, 3],
            [3, 3],
          ]);
          expect(events[0]).to.deep.include({ type: 'mcp.progress', server: 'everything', toolName: 'trigger-long-running-operation', toolCallId });
        });

        it('logging: the server log messages reach onLog, from logLevel up', async () => {
          const events: McpLogEvent[] = [];
          const everything = await open(server(), { onLog: (event) => events.push(event), logLevel: 'debug' });
          await callTool(everything, 'toggle-simulated-logging');
          const first = await waitFor('a log message', () => events.find((e) => typeof e.data === 'string' && e.data.includes('message')), 5000);
          expect(first).to.deep.include({ type: 'mcp.log', server: 'everything' });
          expect(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']).to.include(first.level);
          await callTool(everything, 'toggle-simulated-logging'); // off again
        });

        it('a callback that throws is reported to onError and breaks nothing', async () => {
          const errors: Error[] = [];
          const everything = await open(server(), {
            onProgress: () => {
              throw new Error('hook down');
            },
            onError: (error) => errors.push(error),
          });
          const { returnValue } = await callTool(everything, 'trigger-long-running-operation', { duration: 0.1, steps: 2 });
          expect(textOf(returnValue)).to.contain('Long running operation completed');
          expect(errors.map((e) => e.message)).to.deep.equal(['MCP server "everything": onProgress threw: hook down', 'MCP server "everything": onProgress threw: hook down']);
        });
      });

      describe('resources and prompts', () => {
        it('lists and reads resources; a read resource becomes user message parts', async () => {
          const everything = await open(server());
          const resources = await everything.listResources();
          const features = resources.find((r) => r.uri === 'demo://resource/static/document/features.md');
          expect(features).to.deep.include({ name: 'features.md', mimeType: 'text/markdown' });
          const parts = mcpResourceParts(await everything.readResource(features!.uri));
          expect(parts).to.have.length(1);
          expect((parts[0] as { text: string }).text).to.match(/^\[Resource demo:\/\/resource\/static\/document\/features\.md \(text\/markdown\)\]\n# Everything Server - Features/);

          const blob = mcpResourceParts(await everything.readResource('demo://resource/dynamic/blob/2'));
          expect((blob[0] as { text: string }).text).to.match(/^\[Resource demo:\/\/resource\/dynamic\/blob\/2 \(text\/plain\)\]\nResource 2: This is a base64 blob/);
          // over the size limit: a short text naming it
          const limited = mcpResourceParts(await everything.readResource('demo://resource/dynamic/blob/2'), { maxBlobBytes: 10 });
          expect((limited[0] as { text: string }).text).to.match(/^\[Resource demo:\/\/resource\/dynamic\/blob\/2 \(text\/plain, \d+ bytes\): larger than the 10-byte limit\]$/);
        });

        it('reading an unknown resource is an McpRequestError naming the server, the method and the code', async () => {
          const everything = await open(server());
          try {
            await everything.readResource('demo://resource/nowhere');
            expect.fail('the read succeeded');
          } catch (error) {
            expect(McpRequestError.isInstance(error), String(error)).to.equal(true);
            const requestError = error as McpRequestError;
            expect(requestError).to.deep.include({ server: 'everything', method: 'resources/read' });
            expect(requestError.code).to.be.a('number');
          }
        });

        it('resource templates, with completion of their variables', async () => {
          const everything = await open(server());
          const templates = await everything.listResourceTemplates();
          expect(templates.map((t) => t.uriTemplate)).to.deep.equal(['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/blob/{resourceId}']);
          const good = await everything.complete({ type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, { name: 'resourceId', value: '7' });
          expect(good.values).to.deep.equal(['7']);
          const bad = await everything.complete({ type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, { name: 'resourceId', value: 'x' });
          expect(bad.values).to.deep.equal([]);
        });

        it('subscribe: updates of a subscribed resource reach onResourceUpdated; unsubscribe ends them', async () => {
          const updates: McpResourceUpdatedEvent[] = [];
          const everything = await open(server(), { onResourceUpdated: (event) => updates.push(event) });
          await everything.subscribeResource('demo://resource/dynamic/text/1');
          await callTool(everything, 'toggle-subscriber-updates');
          const update = await waitFor('an update', () => updates[0], 5000);
          expect(update).to.deep.equal({ type: 'mcp.resource_updated', server: 'everything', uri: 'demo://resource/dynamic/text/1' });
          await everything.unsubscribeResource('demo://resource/dynamic/text/1');
          await callTool(everything, 'toggle-subscriber-updates'); // off again
        });

        it('prompts: listed; got with arguments; as kosong messages', async () => {
          const everything = await open(server());
          const prompts = await everything.listPrompts();
          expect(prompts.map((p) => p.name)).to.include.members(['simple-prompt', 'args-prompt', 'completable-prompt', 'resource-prompt']);
          const messages = mcpPromptMessages(await everything.getPrompt('args-prompt', { city: 'Lyon', state: 'Rhône' }));
          expect(messages).to.have.length(1);
          expect(messages[0]!.role).to.equal('user');
          expect((messages[0]!.content[0] as { text: string }).text).to.contain('Lyon').and.contain('Rhône');
        });

        it('prompts: with an embedded resource (its text inline, with its URI)', async () => {
          const everything = await open(server());
          const messages = mcpPromptMessages(await everything.getPrompt('resource-prompt', { resourceType: 'Text', resourceId: '4' }));
          const all = messages.flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : p.type)));
          expect(all.some((t) => t.startsWith('[Resource demo://resource/dynamic/text/4 (text/plain)]\n'))).to.equal(true, all.join('\n---\n'));
        });

        it('prompts: a missing required argument is an McpRequestError; completion of prompt arguments', async () => {
          const everything = await open(server());
          try {
            await everything.getPrompt('args-prompt', {});
            expect.fail('the prompt was given');
          } catch (error) {
            expect(McpRequestError.isInstance(error), String(error)).to.equal(true);
            expect((error as McpRequestError).method).to.equal('prompts/get');
          }
          const completion = await everything.complete({ type: 'ref/prompt', name: 'completable-prompt' }, { name: 'department', value: 'E' });
          expect(completion.values).to.include('Engineering');
          const names = await everything.complete(
            { type: 'ref/prompt', name: 'completable-prompt' },
            { name: 'name', value: '' },
            { arguments: { department: 'Engineering' } },
          );
          expect(names.values.length).to.be.greaterThan(0);
        });
      });

      describe('task-only tools', () => {
        it('a tool with taskSupport "required" is offered and runs through the task API', async () => {
          const everything = await open(server());
          expect(everything.tools.map((t) => t.name)).to.include('simulate-research-query');
          const { returnValue } = await callTool(everything, 'simulate-research-query', { topic: 'MCP tasks' });
          expect(returnValue.isError, JSON.stringify(returnValue)).to.equal(false);
          expect(textOf(returnValue)).to.contain('MCP tasks');
        });

        it('aborting a task call settles it at once as cancelled', async () => {
          const everything = await open(server());
          const controller = new AbortController();
          const pending = callTool(everything, 'simulate-research-query', { topic: 'never finished' }, controller.signal);
          setTimeout(() => controller.abort(new Error('user stop')), 300);
          const started = Date.now();
          const { returnValue } = await pending;
          expect(returnValue.isError).to.equal(true);
          expect(returnValue.message).to.contain('cancelled');
          expect(Date.now() - started).to.be.lessThan(3000); // the research takes 4 s
        });
      });
    });
  }

  it('subscriptions are made again in the new session after the server restarted (http)', async () => {
    const restartable = await startEverythingHttp();
    try {
      const updates: McpResourceUpdatedEvent[] = [];
      const everything = await open(restartable.config, { onResourceUpdated: (event) => updates.push(event) });
      await everything.subscribeResource('demo://resource/dynamic/text/9');
      await restartable.kill();
      const restarted = await startEverythingHttp(restartable.port);
      try {
        // the old session is gone (404): the call runs in a new session, where the subscription is made again
        await callTool(everything, 'toggle-subscriber-updates');
        const update = await waitFor('an update in the new session', () => updates[0], 5000);
        expect(update.uri).to.equal('demo://resource/dynamic/text/9');
        await callTool(everything, 'toggle-subscriber-updates');
      } finally {
        await restarted.kill();
      }
    } finally {
      await restartable.kill();
    }
  });

  it('the same image part as the server sent, base64 untouched (stdio)', async () => {
    const everything = await open(everythingStdio());
    const { returnValue } = await callTool(everything, 'get-tiny-image');
    const image = (returnValue.output as readonly ContentPart[])[1]!;
    expect(image).to.deep.equal(imageURLPart((image as { imageUrl: { url: string } }).imageUrl.url));
    expect((image as { imageUrl: { url: string } }).imageUrl.url).to.match(/^data:image\/png;base64,[A-Za-z0-9+/=]+$/);
  });
});
