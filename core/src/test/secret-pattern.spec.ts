import { expect } from 'chai';
import { REDACTED_SECRET, redactSecrets, secretPattern } from '../provider-kit/index.js';

const KEY = 'sk-a/b c"d';

describe('secretPattern (the one secret matcher: redactSecrets and the logging plugin)', () => {
  it('matches a secret whatever form each character takes: literal, percent-encoded (either case, + for a space), JSON-escaped once or twice', () => {
    const pattern = secretPattern([KEY])!;
    const forms = [
      KEY,
      encodeURIComponent(KEY),
      encodeURIComponent(KEY).toLowerCase(),
      new URLSearchParams({ k: KEY }).toString().slice(2),
      JSON.stringify(KEY).slice(1, -1),
      JSON.stringify(JSON.stringify(KEY)).slice(3, -3),
      'sk-a\\/b c\\u0022d',
      's%6B-a/b c"d', // one character percent-encoded, the rest literal
    ];
    for (const form of forms) expect(`<${form}>`.replace(pattern, '*'), form).to.equal('<*>');
    expect('sk-a/b c'.replace(pattern, '*')).to.equal('sk-a/b c');
  });

  it('on a JSON line: the forms as they read inside a serialized string', () => {
    const line = JSON.stringify({ msg: `x ${KEY}`, args: JSON.stringify({ key: KEY }) });
    const scrubbed = line.replace(secretPattern([KEY], { onJsonLine: true })!, REDACTED_SECRET);
    expect(JSON.parse(scrubbed)).to.deep.equal({ msg: `x ${REDACTED_SECRET}`, args: JSON.stringify({ key: REDACTED_SECRET }) });
  });

  it('longest secret first; empty secrets ignored; none at all: undefined', () => {
    expect('abcdefgh'.replace(secretPattern(['abcdef', 'abcdefgh', ''])!, '*')).to.equal('*');
    expect(secretPattern([])).to.equal(undefined);
    expect(secretPattern([''])).to.equal(undefined);
  });

  it('redactSecrets uses it: a secret written in mixed forms is found too', () => {
    expect(redactSecrets('key=s%6B-a%2fb+c%22d', [KEY])).to.equal(`key=${REDACTED_SECRET}`);
  });
});
