import { expect } from 'chai';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { testPrefix } from './support.js';

describe('closing while Redis is gone (a real process)', function () {
  this.timeout(90_000);
  let server: RedisServer | undefined;
  let proc: TestProcess | undefined;

  afterEach(async () => {
    await proc?.kill();
    await server?.stop();
  });

  it('every piece closes in bounded time and leaves nothing behind: the process exits on its own (regression: it stayed alive for ever)', async () => {
    server = await RedisServer.start();
    proc = await TestProcess.start(fixture('shutdown-main.js'), [server.url, testPrefix()]);
    await server.kill(); // a crash: every client is now reconnecting, a tool still runs
    // SIGTERM, then SIGKILL after 45 s: the closes are bounded by seconds, so only a leak lasts that long.
    await proc.stop(45_000);
    const how = `exit code ${proc.child.exitCode}, signal ${proc.child.signalCode}, output:\n${proc.output.join('')}`;
    expect(proc.output.join(''), how).to.match(/^closed$/m);
    expect(proc.child.signalCode, how).to.equal(null);
    expect(proc.child.exitCode, how).to.equal(0);
  });
});
