import { expect } from 'chai';
import sinon from 'sinon';

import { IdleTimer } from '../provider-kit/index.js';

describe('IdleTimer', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  it('fires once when a wait lasts longer than the timeout', () => {
    const onTimeout = sinon.spy();
    const timer = new IdleTimer(100, onTimeout);
    timer.waiting();
    clock.tick(99);
    expect(onTimeout.called).to.equal(false);
    clock.tick(1);
    expect(onTimeout.calledOnce).to.equal(true);
    expect(timer.fired).to.equal(true);
    timer.waiting();
    clock.tick(1_000);
    expect(onTimeout.calledOnce).to.equal(true);
    timer.stop();
  });

  it('counts only waiting: time the consumer spends between chunks does not count', () => {
    const onTimeout = sinon.spy();
    const timer = new IdleTimer(100, onTimeout);
    for (let i = 0; i < 10; i++) {
      timer.waiting();
      clock.tick(60); // the server answers after 60 ms
      timer.idle();
      clock.tick(500); // the consumer takes its time
    }
    expect(onTimeout.called).to.equal(false);
    timer.waiting();
    clock.tick(100);
    expect(onTimeout.calledOnce).to.equal(true);
    expect(timer.ms).to.equal(100);
  });

  it('never fires after stop()', () => {
    const onTimeout = sinon.spy();
    const timer = new IdleTimer(100, onTimeout);
    timer.waiting();
    timer.stop();
    clock.tick(1_000);
    expect(onTimeout.called).to.equal(false);
  });
});
