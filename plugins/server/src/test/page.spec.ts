import { expect } from 'chai';
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

import { chromium, type Browser, type Page } from 'playwright-core';

import { Kernel, requireApproval, toolOk, type ToolResult, type Toolset } from '@kosong/core';
import { EchoChatProvider, ScriptedEchoChatProvider } from '@kosong/provider-echo';
import type { FastifyInstance } from 'fastify';

import { apiKeyAuth, hashApiKey } from '../auth.js';
import { registerPage } from '../page.js';
import { createServer } from '../server.js';
import { memorySessions } from '../sessions.js';
import { KEYS, localToolset, UnpricedEchoChatProvider } from './support.js';

/** Debian's Chromium (test-support/ensure-chromium.mjs installs it), or `$CHROMIUM`. */
function chromiumExecutable(): string {
  const wanted = process.env.CHROMIUM?.trim() || 'chromium';
  const candidates = wanted.includes('/') ? [wanted] : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, wanted));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  throw new Error(`No Chromium: ${wanted} is not on the PATH. Run node test-support/ensure-chromium.mjs (or apt-get install -y chromium), or set CHROMIUM`);
}

/** A step script for the echo model: a step that calls a slow tool and a quick one while it goes on talking, then the answer. */
const TOOLS_WHILE_TALKING = [
  'text: Let me check.',
  'tool_call: {"id": "c1", "name": "wait", "arguments": "{\\"ms\\": 300}"}',
  'tool_call: {"id": "c2", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}',
  'text: While they run,',
  'text:  I keep',
  'text:  talking',
  'text:  slowly.',
  '---',
  'text: The sum is 3.',
].join('\n');

/**
 * Run in the page before a prompt is sent: notes what the assistant's message said when its text
 * first showed "Let me check." and when the row of tool call c1 first appeared (a MutationObserver:
 * the page as it was at that moment, whatever the test's own timing).
 */
const NOTE_MOMENTS = `
  window.kosongMoments = {};
  new MutationObserver(() => {
    const moments = window.kosongMoments;
    const said = document.querySelector('.message.assistant')?.textContent ?? '';
    if (moments.firstText === undefined && said.includes('Let me check.')) moments.firstText = said;
    if (moments.toolRow === undefined && document.querySelector('.timeline .row.tool[data-tool-call-id="c1"]')) {
      moments.toolRow = { said, status: document.querySelector('.status')?.getAttribute('data-status') };
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
`;

/** A step that calls `gate`, which returns only when the test opens it ({@link openGates}), then a last step. */
const GATED = ['text: Before', 'text:  the gate.', 'tool_call: {"id": "g1", "name": "gate", "arguments": "{}"}', '---', 'text: After', 'text:  the gate.'].join('\n');

/** The calls of `gate` that wait. */
const gateWaiters: (() => void)[] = [];

/** Returns every waiting call of `gate`. */
function openGates(): void {
  for (const open of gateWaiters.splice(0)) open();
}

/** The local toolset, and `gate`: a call that waits until the test opens it (or its signal aborts it). */
function gatedToolset(log?: string[]): Toolset {
  const local = localToolset(log);
  return {
    tools: [...local.tools, { name: 'gate', description: 'Waits until it is opened.', parameters: { type: 'object', properties: {} } }],
    handle(call, context) {
      if (call.function.name !== 'gate') return local.handle(call, context);
      return new Promise<ToolResult>((resolve, reject) => {
        const open = (): void => resolve({ toolCallId: call.id, returnValue: toolOk({ output: 'opened' }) });
        gateWaiters.push(open);
        context.signal.addEventListener('abort', () => (gateWaiters.splice(gateWaiters.indexOf(open), 1), reject(context.signal.reason as Error)), { once: true });
      });
    },
  };
}

const DELAY_MS = 100;

/** The key of the tenant whose every tool call needs approval. */
const APPROVER_KEY = 'sk-initech-approvals-0123';

/** A call of `add` (which needs approval for that tenant), then the answer. */
function approvalScript(callId: string): string {
  return ['text: I need to add.', `tool_call: {"id": "${callId}", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}`, '---', 'text: The sum is 3.'].join('\n');
}

describe('@kosong/server: the web page in Chromium (useChat and the step timeline, end to end)', function () {
  this.timeout(30_000);
  let browser: Browser;
  let app: FastifyInstance;
  let kernel: Kernel;
  let url: string;
  let page: Page;
  const approverLog: string[] = [];
  /** Script errors and CSP violations the page reported. */
  const problems: string[] = [];
  const shots = mkdtempSync(join(tmpdir(), 'kosong-page-'));

  /** Writes a screenshot to the temporary folder and prints its path. */
  async function screenshot(name: string): Promise<void> {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`      screenshot: ${path}`);
  }

  async function openPage(key: string, at = url): Promise<void> {
    await page.goto(`${at}/`);
    await page.evaluate('sessionStorage.clear()'); // the previous test's key and messages
    await page.reload();
    await page.fill('input[name="api-key"]', key);
  }

  async function send(text: string): Promise<void> {
    await page.fill('textarea[aria-label="message"]', text);
    await page.press('textarea[aria-label="message"]', 'Enter');
  }

  const assistantText = (): Promise<string> => page.locator('.message.assistant').last().innerText();
  /** Waits until an assistant message shows `text`. */
  const assistantSays = (text: string): Promise<void> => page.locator('.message.assistant', { hasText: text }).first().waitFor();

  before(async () => {
    browser = await chromium.launch({ executablePath: chromiumExecutable(), args: ['--no-sandbox', '--disable-gpu'] });
    kernel = new Kernel();
    kernel.tenants.define('acme', { provider: new EchoChatProvider({ delayMs: DELAY_MS }), toolset: gatedToolset() });
    kernel.tenants.define('globex', { provider: new EchoChatProvider({ delayMs: DELAY_MS }), toolset: localToolset() });
    kernel.tenants.define('initech', { provider: new EchoChatProvider({ delayMs: 20 }), toolset: requireApproval(gatedToolset(approverLog), ['add', 'wait', 'fail']) });
    const auth = apiKeyAuth([
      { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
      { sha256: hashApiKey(KEYS.globex), tenant: 'globex' },
      { sha256: hashApiKey(APPROVER_KEY), tenant: 'initech' },
    ]);
    const sessions = memorySessions();
    app = createServer({ kernel, auth, sessions });
    registerPage(app, { savedChats: { auth, sessions } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    url = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await kernel?.dispose();
  });
  beforeEach(async () => {
    // One page for every test (a new browser context costs seconds on a loaded machine); each test
    // starts from a blank tab without the previous one's key or messages.
    if (page === undefined) {
      page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => void (/Content Security Policy/i.test(message.text()) && problems.push(`CSP: ${message.text()}`)));
      if (process.env.DEBUG_PAGE) page.on('response', (r) => console.log(`      ${r.request().method()} ${r.url()} ${r.status()}`));
      if (process.env.DEBUG_PAGE) page.on('console', (m) => console.log(`      console: ${m.text()}`));
    }
    await page.goto('about:blank');
    await page.context().clearCookies();
    openGates();
  });
  afterEach(() => {
    // No script error and no breach of the page's Content-Security-Policy, in any test.
    const seen = problems.splice(0);
    expect(seen).to.deep.equal([]);
  });

  it('streams the text as it comes, shows the tool rows (in call order, with results) before the text ends, then usage', async () => {
    await openPage(KEYS.acme);
    await page.evaluate(NOTE_MOMENTS);
    await send(TOOLS_WHILE_TALKING);
    await page.locator('.timeline .row.tool[data-tool-call-id="c1"]').waitFor();
    await screenshot('1-tools-while-streaming');
    await assistantSays('The sum is 3.');
    await page.locator('.status[data-status="ready"]').waitFor();
    const rows = page.locator('.timeline .step[data-step="0"] .row.tool');
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tool-call-id')))).to.deep.equal(['c1', 'c2']);
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-state')))).to.deep.equal(['done', 'done']);
    expect(await page.locator('.row.tool[data-tool-call-id="c1"] .tool-result').innerText()).to.equal('waited');
    expect(await page.locator('.row.tool[data-tool-call-id="c2"] .tool-result').innerText()).to.equal('3');

    // What the page showed when the text first appeared, and when the slow tool's row appeared: the
    // text streams, and the row is there while the model still streams the step's text.
    const moments = (await page.evaluate('window.kosongMoments')) as { firstText: string; toolRow: { said: string; status: string } };
    expect(moments.firstText).to.include('Let me check.').and.not.include('slowly.');
    expect(moments.toolRow.said).to.include('Let me check.').and.not.include('slowly.');
    expect(moments.toolRow.status).to.equal('streaming');

    // Each tool's bar starts where its call completed, before the step's stream ended.
    const slowTool = page.locator('.timeline .row.tool[data-tool-call-id="c1"]');
    const step = page.locator('.timeline .step[data-step="0"]');
    const streamEnd = Number(await step.getAttribute('data-stream-end'));
    const calledAt = Number(await slowTool.getAttribute('data-called-at'));
    const endedAt = Number(await slowTool.getAttribute('data-ended-at'));
    expect(calledAt).to.be.below(streamEnd);
    expect(endedAt).to.be.above(calledAt);
    expect(await page.locator('.timeline .step').count()).to.equal(2);
    expect(await page.locator('.turn').getAttribute('data-outcome')).to.equal('finish');
    expect(await page.locator('.turn-usage').innerText()).to.match(/^Turn: in \d+ · out \d+ tokens/);
    // The chat's own tool parts, from useChat's messages.
    expect(await page.locator('.chat .tool-part[data-tool-call-id="c2"]').innerText()).to.include('add({"a":1,"b":2}) → 3');
    await screenshot('2-turn-done');
  });

  it('a reload in the middle of a turn resumes its stream (GET …/stream) and shows the whole answer; the ended turns stay drawn', async () => {
    await openPage(KEYS.acme);
    await send('text: A first turn.');
    await assistantSays('A first turn.');
    await page.locator('.status[data-status="ready"]').waitFor();
    await send(GATED);
    await page.locator('.timeline .row.tool[data-tool-call-id="g1"][data-state="running"]').waitFor();
    const resumed = page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stream$/.test(response.url()) && response.status() === 200);
    await page.reload();
    await resumed;
    // The replay rebuilt the turn so far, the call still running; then the rest comes live.
    await page.locator('.timeline .turn[data-origin="resume"] .row.tool[data-tool-call-id="g1"][data-state="running"]').waitFor();
    expect(await assistantText()).to.include('Before the gate.').and.not.include('After');
    openGates();
    await assistantSays('After the gate.');
    await page.locator('.status[data-status="ready"]').waitFor();
    // The prompts, kept by the tab, are there once, and the answers once.
    expect(await page.locator('.message.user').count()).to.equal(2);
    expect(await page.locator('.message.assistant').count()).to.equal(2);
    expect(await page.locator('.chat .tool-part[data-tool-call-id="g1"]').innerText()).to.include('→ opened');
    // The first turn, kept by the tab, and the resumed one.
    expect(await page.locator('.turn').evaluateAll((turns) => turns.map((turn) => [turn.getAttribute('data-origin'), turn.getAttribute('data-outcome')]))).to.deep.equal([
      ['send', 'finish'],
      ['resume', 'finish'],
    ]);
    await screenshot('3-resumed-after-reload');
  });

  it("Stop stops the server's turn (POST …/<id>/stop): its stream ends with abort, the waiting tool is cancelled", async () => {
    await openPage(KEYS.acme);
    await send(GATED);
    await page.locator('.timeline .row.tool[data-tool-call-id="g1"][data-state="running"]').waitFor();
    const stopped = page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stop$/.test(response.url()));
    await page.click('button:has-text("Stop")');
    expect((await stopped).status()).to.equal(204);
    await page.locator('.turn[data-outcome="abort"]').waitFor();
    await page.locator('.status[data-status="ready"]').waitFor();
    expect(gateWaiters).to.deep.equal([]); // the gate's call was aborted: nobody waits
    expect(await assistantText()).to.include('Before the gate.').and.not.include('After');
    await screenshot('9-stopped');
  });

  it('a wrong API key shows a clear message, and the right one then works; no key says so', async () => {
    await openPage('');
    expect(await page.locator('.chat [role="alert"]').innerText()).to.include('No API key'); // the resume at load was refused
    await page.fill('input[name="api-key"]', 'sk-not-a-key');
    const refused = page.waitForResponse((response) => response.url().endsWith('/api/chat') && response.request().method() === 'POST');
    await send('text: never');
    expect((await refused).status()).to.equal(401);
    const alert = page.locator('.chat [role="alert"]');
    await alert.waitFor();
    expect(await alert.innerText()).to.include('Wrong API key');
    await screenshot('4-wrong-key');

    await page.fill('input[name="api-key"]', KEYS.acme);
    await send('text: now it works');
    await assistantSays('now it works');
    expect(await alert.count()).to.equal(0);
  });

  it('opens a saved chat read-only (its tool calls and results), and only for the tenant whose chat it is', async () => {
    await openPage(KEYS.acme);
    await send(TOOLS_WHILE_TALKING);
    await page.locator('.status[data-status="ready"]').waitFor();
    await assistantSays('The sum is 3.');
    const chatId = decodeURIComponent(new URL(page.url()).hash.replace(/^#chat=/, ''));
    // The browser remembers the chats it opened, for "Open saved".
    expect(await page.locator(`#recent-chats option[value="${chatId}"]`).count()).to.equal(1);

    await page.click('text=Saved copy');
    await page.locator('.saved .message.assistant').waitFor();
    expect(await page.locator('.saved .message.user').innerText()).to.include('tool_call');
    const saved = await page.locator('.saved .message.assistant').innerText();
    expect(saved).to.include('While they run, I keep talking slowly.');
    expect(saved).to.include('The sum is 3.');
    expect(await page.locator('.saved .tool-part[data-tool-call-id="c2"]').innerText()).to.include('→ 3');
    expect(await page.locator('.saved-steps > li').count()).to.equal(2);
    expect(await page.locator('.saved textarea').count()).to.equal(0);
    await screenshot('5-saved-chat');

    // Another tenant's key, the same id: an empty chat of its own.
    await page.fill('input[name="api-key"]', KEYS.globex);
    await page.locator('.saved >> text=This chat has no messages.').waitFor();
    expect(await page.locator('.saved .message').count()).to.equal(0);
    expect(new URL(page.url()).hash).to.equal(`#saved=${encodeURIComponent(chatId)}`);
  });

  it('asks for approval inline: Approve in the timeline runs the call and the turn goes on; Deny in the chat does not run it', async () => {
    approverLog.length = 0;
    await openPage(APPROVER_KEY);
    await send(approvalScript('a1'));
    const waiting = page.locator('.timeline .row.tool[data-tool-call-id="a1"][data-state="approval-requested"]');
    await waiting.waitFor();
    expect(await page.locator('.chat .tool-part[data-tool-call-id="a1"]').getAttribute('data-state')).to.equal('approval-requested');
    expect(approverLog).to.deep.equal([]); // nothing ran yet
    await screenshot('6-approval-requested');
    await waiting.locator('button.approve').click();
    await assistantSays('The sum is 3.');
    await page.locator('.status[data-status="ready"]').waitFor();
    expect(approverLog).to.deep.equal(['add']);
    expect(await page.locator('.chat .tool-part[data-tool-call-id="a1"]').getAttribute('data-state')).to.equal('output-available');
    expect(await page.locator('.chat .tool-part[data-tool-call-id="a1"]').innerText()).to.include('→ 3');
    // The continuation is a turn of its own, whose stream begins with the approved call's result.
    const approved = page.locator('.turn[data-turn="2"] .approved-calls .row.tool[data-tool-call-id="a1"]');
    expect(await approved.getAttribute('data-state')).to.equal('done');
    expect(await approved.locator('.tool-result').innerText()).to.equal('3');
    // Its step is the turn's second: the steps go on counting.
    expect(await page.locator('.turn[data-turn="2"] .step[data-step="0"] .label').innerText()).to.equal('step 2');
    expect(await page.locator('.message.assistant').count()).to.equal(1);
    await screenshot('7-approved');

    await send(approvalScript('d1'));
    const denyButton = page.locator('.chat .tool-part[data-tool-call-id="d1"] button.deny');
    await denyButton.click();
    await page.locator('.chat .tool-part[data-tool-call-id="d1"][data-state="output-denied"]').waitFor();
    await page.locator('.status[data-status="ready"]').waitFor();
    expect(approverLog).to.deep.equal(['add']); // the denied call never ran
    expect(await page.locator('.timeline .row.tool[data-tool-call-id="d1"]').first().getAttribute('data-state')).to.equal('denied');
  });

  it('a reload during the continuation after an approval resumes it into the same assistant message', async () => {
    await openPage(APPROVER_KEY);
    const script = [
      'tool_call: {"id": "r1", "name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 2}"}',
      '---',
      'tool_call: {"id": "r2", "name": "gate", "arguments": "{}"}',
      '---',
      'text: All done.',
    ].join('\n');
    await send(script);
    await page.locator('.timeline .row.tool[data-tool-call-id="r1"] button.approve').click();
    await page.locator('.timeline .row.tool[data-tool-call-id="r2"][data-state="running"]').waitFor();
    const resumed = page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stream$/.test(response.url()) && response.status() === 200);
    await page.reload();
    await resumed;
    await page.locator('.timeline .turn[data-origin="resume"] .row.tool[data-tool-call-id="r2"]').waitFor();
    openGates();
    await assistantSays('All done.');
    await page.locator('.status[data-status="ready"]').waitFor();
    expect(await page.locator('.message.assistant').count()).to.equal(1);
    expect(await page.locator('.chat .tool-part[data-tool-call-id="r1"]').getAttribute('data-state')).to.equal('output-available');
    expect(await page.locator('.chat .tool-part[data-tool-call-id="r2"]').getAttribute('data-state')).to.equal('output-available');
    await screenshot('11-reload-after-approval');
  });

  it("cannot send anything to another origin: its Content-Security-Policy refuses the request before it leaves", async () => {
    const received: string[] = [];
    const other = createHttpServer((request, response) => {
      received.push(`${request.method} ${request.url}`);
      response.end('ok');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/steal`;
      await openPage(KEYS.acme);
      const outcome = await page.evaluate(`fetch(${JSON.stringify(otherUrl)}, { method: 'POST', headers: { authorization: 'Bearer ${KEYS.acme}' } }).then(() => 'sent', (error) => 'refused: ' + error.message)`);
      expect(outcome).to.match(/^refused: /);
      expect(received).to.deep.equal([]);
      const refusals = problems.splice(0);
      expect(refusals.some((text) => text.includes('connect-src'))).to.equal(true);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  describe('a server that takes requests without a key (as kosong serve does with none, from its machine)', () => {
    let open: FastifyInstance;
    let openUrl: string;
    before(async () => {
      const sessions = memorySessions();
      const local = (): string => 'acme';
      open = createServer({ kernel, auth: local, sessions });
      registerPage(open, { savedChats: { auth: local, sessions } });
      await open.listen({ port: 0, host: '127.0.0.1' });
      openUrl = `http://127.0.0.1:${(open.server.address() as { port: number }).port}`;
    });
    after(() => open?.close());

    it('chats with no key, sending no Authorization header, and resumes after a reload', async () => {
      await openPage('', openUrl);
      const posted = page.waitForRequest((request) => request.url().endsWith('/api/chat') && request.method() === 'POST');
      await send(GATED);
      expect((await posted).headers()).to.not.have.property('authorization');
      await page.locator('.timeline .row.tool[data-tool-call-id="g1"][data-state="running"]').waitFor();
      await page.reload();
      await page.locator('.timeline .turn[data-origin="resume"] .row.tool[data-tool-call-id="g1"]').waitFor();
      openGates();
      await assistantSays('After the gate.');
      expect(await page.locator('.chat [role="alert"]').count()).to.equal(0);
    });
  });

  describe("a step retried by the agent (the real server's data-kosong-retry and per-step usage)", () => {
    let retrying: FastifyInstance;
    let retryingUrl: string;
    before(async () => {
      // The first attempt fails with a 503, the second answers: a queue of scripts, one per attempt.
      kernel.tenants.define('retrier', { provider: new ScriptedEchoChatProvider(['error: 503', 'usage: {"input_other": 12, "output": 5}\ntext: Second try.']), toolset: localToolset() });
      const sessions = memorySessions();
      const retrier = (): string => 'retrier';
      retrying = createServer({ kernel, auth: retrier, sessions, agent: { systemPrompt: '', retry: { initialDelayMs: 100, jitterMs: 0 } } });
      registerPage(retrying, { savedChats: { auth: retrier, sessions } });
      await retrying.listen({ port: 0, host: '127.0.0.1' });
      retryingUrl = `http://127.0.0.1:${(retrying.server.address() as { port: number }).port}`;
    });
    after(() => retrying?.close());

    it('draws the failed attempt on its step, and the usage of the step and of the turn', async () => {
      await openPage('', retryingUrl);
      await send('go');
      await assistantSays('Second try.');
      await page.locator('.status[data-status="ready"]').waitFor();
      const retry = page.locator('.timeline .step[data-step="0"] .row.retry[data-attempt="1"]');
      expect(await retry.innerText()).to.match(/again in 0\.10 s · .*503/);
      // This kernel has no price for the echo model: the cost is unknown, not $0.
      expect(await page.locator('.timeline .step[data-step="0"] > .row .info').first().innerText()).to.match(/in 12 · out 5 tokens · cost unknown$/);
      expect(await page.locator('.turn-usage').innerText()).to.equal('Turn: in 12 · out 5 tokens · cost unknown');
      expect(await page.locator('.chat [role="alert"]').count()).to.equal(0);
      await screenshot('10-retried-step');
    });
  });

  describe("cost per step and per turn from the real server: the kernel's prices, and unknown for a model without one", () => {
    let costing: FastifyInstance;
    let costingKernel: Kernel;
    let costingUrl: string;
    const PRICED_KEY = 'sk-priced-0123456789';
    const UNPRICED_KEY = 'sk-unpriced-0123456789';

    before(async () => {
      // $3 per million input tokens, $15 per million output tokens, for the echo model only.
      costingKernel = new Kernel({ prices: { 'echo/echo': { input: 3, output: 15 } } });
      costingKernel.tenants.define('priced', { provider: new EchoChatProvider({ delayMs: 20 }), toolset: localToolset() });
      costingKernel.tenants.define('unpriced', { provider: new UnpricedEchoChatProvider({ delayMs: 20 }), toolset: localToolset() });
      const auth = apiKeyAuth([
        { sha256: hashApiKey(PRICED_KEY), tenant: 'priced' },
        { sha256: hashApiKey(UNPRICED_KEY), tenant: 'unpriced' },
      ]);
      const sessions = memorySessions();
      costing = createServer({ kernel: costingKernel, auth, sessions });
      registerPage(costing, { savedChats: { auth, sessions } });
      await costing.listen({ port: 0, host: '127.0.0.1' });
      costingUrl = `http://127.0.0.1:${(costing.server.address() as { port: number }).port}`;
    });
    after(async () => {
      await costing?.close();
      await costingKernel?.dispose();
    });

    /** A step that calls `add` (1,000 tokens in, 200 out), then the answer (2,000 in, 400 out). */
    const PRICED_SCRIPT = [
      'usage: {"input_other": 1000, "output": 200}',
      'tool_call: {"id": "p1", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}',
      '---',
      'usage: {"input_other": 2000, "output": 400}',
      'text: Priced.',
    ].join('\n');

    const stepInfo = (index: number): Promise<string> => page.locator(`.timeline .step[data-step="${index}"] > .row .info`).first().innerText();

    it("shows each step's cost (the kernel's price) and the turn's", async () => {
      await openPage(PRICED_KEY, costingUrl);
      await send(PRICED_SCRIPT);
      await assistantSays('Priced.');
      await page.locator('.status[data-status="ready"]').waitFor();
      // 1,000 × $3 + 200 × $15 per million = $0.006; 2,000 × $3 + 400 × $15 per million = $0.012.
      expect(await stepInfo(0)).to.match(/in 1000 · out 200 tokens · \$0\.00600$/);
      expect(await stepInfo(1)).to.match(/in 2000 · out 400 tokens · \$0\.012$/);
      expect(await page.locator('.timeline .step[data-step="0"] .cost').getAttribute('title')).to.equal('echo/echo');
      expect(await page.locator('.turn-usage').innerText()).to.equal('Turn: in 3000 · out 600 tokens · $0.018');
      expect(await page.locator('.chat [role="alert"]').count()).to.equal(0);
      await screenshot('12-cost-per-step');
    });

    it('says "cost unknown" for a model without a price, never $0', async () => {
      await openPage(UNPRICED_KEY, costingUrl);
      await send(PRICED_SCRIPT);
      await assistantSays('Priced.');
      await page.locator('.status[data-status="ready"]').waitFor();
      expect(await stepInfo(0)).to.match(/in 1000 · out 200 tokens · cost unknown$/);
      expect(await stepInfo(1)).to.match(/in 2000 · out 400 tokens · cost unknown$/);
      expect(await page.locator('.timeline .step[data-step="0"] .cost.unknown').getAttribute('title')).to.equal('echo/echo-unpriced has no price');
      expect(await page.locator('.turn-usage').innerText()).to.equal('Turn: in 3000 · out 600 tokens · cost unknown');
      expect(await page.locator('.timeline').innerText()).to.not.include('$');
      await screenshot('13-cost-unknown');
    });
  });

  describe("the page's reading of a step's retry, usage and cost, from a scripted stream", () => {
    let scripted: FastifyInstance;
    let scriptedUrl: string;

    /** The chunks of a turn whose one step is retried once, with usage and cost per step and for the turn. */
    const CHUNKS = [
      { type: 'start', messageId: 'm-1' },
      { type: 'start-step' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'First try' },
      { type: 'text-end', id: 't1' },
      { type: 'data-kosong-retry', data: { step: 1, attempt: 1, nextAttempt: 2, delayMs: 250, error: 'Simulated 503 error' }, transient: true },
      { type: 'text-start', id: 't2' },
      { type: 'text-delta', id: 't2', delta: 'Second try.' },
      { type: 'text-end', id: 't2' },
      { type: 'finish-step' },
      { type: 'message-metadata', messageMetadata: { step: { usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 }, cost: 0.0012 } } },
      { type: 'finish', finishReason: 'stop', messageMetadata: { usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 }, cost: 0.0012, stopReason: 'no_tool_calls', steps: 1 } },
    ];

    before(async () => {
      const Fastify = (await import('fastify')).default;
      // the page keeps its connections open: closing must not wait for the browser to drop them
      scripted = Fastify({ forceCloseConnections: true });
      registerPage(scripted);
      scripted.post('/api/chat', async (_request, reply) => {
        reply.header('content-type', 'text/event-stream').header('x-vercel-ai-ui-message-stream', 'v1');
        return [...CHUNKS.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'].join('');
      });
      scripted.get('/api/chat/:id/stream', async (_request, reply) => reply.status(204).send());
      await scripted.listen({ port: 0, host: '127.0.0.1' });
      scriptedUrl = `http://127.0.0.1:${(scripted.server.address() as { port: number }).port}`;
    });
    after(() => scripted?.close());

    it('draws a retry on its step, and the usage and cost of the step and of the turn', async () => {
      await openPage('any', scriptedUrl);
      await send('go');
      await page.locator('.status[data-status="ready"]').waitFor();
      expect(await assistantText()).to.include('Second try.');
      const retry = page.locator('.timeline .step[data-step="0"] .row.retry[data-attempt="1"]');
      expect(await retry.innerText()).to.include('again in 0.25 s · Simulated 503 error');
      expect(await page.locator('.timeline .step[data-step="0"] > .row .info').first().innerText()).to.match(/in 12 · out 5 tokens · \$0\.00120$/);
      expect(await page.locator('.turn-usage').innerText()).to.equal('Turn: in 12 · out 5 tokens · $0.00120');
      expect(await page.locator('.chat [role="alert"]').count()).to.equal(0); // the AI SDK's client took every chunk
      await screenshot('8-retry-and-usage');
    });
  });
});
