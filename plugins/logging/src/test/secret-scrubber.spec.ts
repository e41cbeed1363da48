import { expect } from 'chai';
import { REDACTED, SecretScrubber } from '../index.js';
import { stringsIn } from './support.js';

const KEY = 'sk-abc123';
const ODD = 'a"b\\c\n';

describe('SecretScrubber', () => {
  it('replaces every occurrence of every secret, longest first, and ignores empty secrets', () => {
    const scrubber = new SecretScrubber({ secrets: ['', 'sk-abc', KEY] });
    expect(scrubber.scrubString(`x ${KEY} y ${KEY} sk-abc!`)).to.equal(`x ${REDACTED} y ${REDACTED} ${REDACTED}!`);
    expect(scrubber.scrubString('nothing here')).to.equal('nothing here');
    expect(new SecretScrubber({ secrets: [''] }).hasSecrets).to.equal(false);
    expect(() => new SecretScrubber({ secrets: [null as unknown as string] })).to.throw(TypeError, /secrets\[0\]/);
  });

  it('finds a secret JSON-escaped (once and twice) and URL-encoded', () => {
    const scrubber = new SecretScrubber({ secrets: [ODD], censor: '***' });
    const once = JSON.stringify({ k: ODD });
    expect(scrubber.scrubString(once)).to.equal('{"k":"***"}');
    expect(scrubber.scrubString(JSON.stringify(once))).to.equal('"{\\"k\\":\\"***\\"}"');
    expect(scrubber.scrubString(`?q=${encodeURIComponent(ODD)}&x=1`)).to.equal('?q=***&x=1');
  });

  it('scrubs a serialized line and leaves it valid JSON, wherever the secret was', () => {
    const scrubber = new SecretScrubber({ secrets: [ODD, KEY] });
    const record = { msg: `m ${ODD}`, nested: { args: JSON.stringify({ key: ODD }), list: [`${KEY}${KEY}`] }, [`key-${KEY}`]: 1 };
    const scrubbed = scrubber.scrubLine(JSON.stringify(record));
    const parsed = JSON.parse(scrubbed) as unknown;
    for (const text of stringsIn(parsed)) expect(text).not.to.include(ODD).and.not.to.include(KEY);
    expect(parsed).to.deep.equal({ msg: `m ${REDACTED}`, nested: { args: `{"key":"${REDACTED}"}`, list: [`${REDACTED}${REDACTED}`] }, [`key-${REDACTED}`]: 1 });
    expect(new SecretScrubber().scrubLine('{"a":1}')).to.equal('{"a":1}');
  });

  it('turns values into scrubbed plain data: errors with causes and aggregates, maps, headers, sets, odd values', () => {
    const scrubber = new SecretScrubber({ secrets: [KEY] });
    const inner = Object.assign(new Error(`inner ${KEY}`), { code: 'E_INNER' });
    const aggregate = new AggregateError([new RangeError(`range ${KEY}`)], 'many', { cause: inner });
    const headers = new Headers({ Authorization: `Bearer ${KEY}`, 'X-Request-Id': 'r-1' });
    const value = scrubber.scrubValue({
      error: aggregate,
      headers,
      map: new Map([['k', KEY]]),
      set: new Set([KEY]),
      big: 10n,
      nan: Number.NaN,
      date: new Date(0),
      bytes: new Uint8Array(4),
      fn: () => KEY,
      missing: undefined,
      [`${KEY}-key`]: 'key names too',
    }) as Record<string, unknown>;
    const error = value['error'] as Record<string, unknown>;
    expect(error).to.include({ name: 'AggregateError', message: 'many' });
    expect(error['cause']).to.include({ name: 'Error', message: `inner ${REDACTED}`, code: 'E_INNER' });
    expect((error['errors'] as Record<string, unknown>[])[0]).to.include({ name: 'RangeError', message: `range ${REDACTED}` });
    expect(Object.keys(error)).to.deep.equal(['name', 'message', 'cause', 'errors', 'stack']);
    expect(value['headers']).to.deep.equal({ authorization: REDACTED, 'x-request-id': 'r-1' });
    expect(value).to.deep.include({ map: { k: REDACTED }, set: [REDACTED], big: '10', nan: 'NaN', date: '1970-01-01T00:00:00.000Z', bytes: '[Uint8Array 4 bytes]' });
    expect(value).not.to.have.any.keys('fn', 'missing');
    expect(value[`${REDACTED}-key`]).to.equal('key names too');
  });

  it('redacts sensitive keys at any depth, whatever their spelling; bounds cycles, depth and sizes', () => {
    const scrubber = new SecretScrubber({ maxStringLength: 10 });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    let deep: Record<string, unknown> = { bottom: true };
    for (let i = 0; i < 20; i++) deep = { deep };
    const value = scrubber.scrubValue({
      a: { b: { c: { API_KEY: 'x', 'Api-Key': 'y', apiKey: { nested: 'z' }, Authorization: 'Bearer q', password: null } } },
      cyclic,
      deep,
      long: 'x'.repeat(50),
      many: Array.from({ length: 150 }, (_, i) => i),
      ['__proto__']: { polluted: true },
    }) as Record<string, unknown>;
    expect(value['a']).to.deep.equal({ b: { c: { API_KEY: REDACTED, 'Api-Key': REDACTED, apiKey: REDACTED, Authorization: REDACTED, password: null } } });
    expect(value['cyclic']).to.deep.equal({ name: 'loop', self: '[Circular]' });
    expect(JSON.stringify(value['deep'])).to.include('[Truncated]');
    expect(value['long']).to.equal(`${'x'.repeat(10)}…[truncated]`);
    expect((value['many'] as unknown[]).at(-1)).to.equal('[50 more]');
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
    expect(new SecretScrubber({ redactKeys: [] }).scrubValue({ password: 'p' })).to.deep.equal({ password: 'p' });
  });
});
