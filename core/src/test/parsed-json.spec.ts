import { expect } from 'chai';
import { NUMBER_OUT_OF_RANGE, checkParsedJson, stripPrototypeKeys } from '../schema/parsed-json.js';

describe('checkParsedJson and stripPrototypeKeys (the rule for JSON a model wrote)', () => {
  it('a number beyond the double range is an issue at its path; finite ones, however large or small, are not', () => {
    expect(checkParsedJson(JSON.parse('1e400'))).to.deep.equal({ ok: false, issues: [{ path: [], message: NUMBER_OUT_OF_RANGE }] });
    const value: unknown = JSON.parse('{"a": [1, {"b": -1e999}], "c": 1e400, "d": 1.7976931348623157e308, "e": 5e-324, "f": 1e-400}');
    const check = checkParsedJson(value);
    expect(check.ok).to.equal(false);
    const issues = check.ok ? [] : check.issues;
    expect(issues.map((issue) => issue.path).sort((x, y) => x.length - y.length)).to.deep.equal([['c'], ['a', 1, 'b']]);
    expect(checkParsedJson(JSON.parse('{"d": 1.7976931348623157e308, "e": 5e-324, "f": 1e-400, "s": "1e400"}')).ok).to.equal(true);
  });

  it('removes own __proto__ keys and object-valued Object.prototype member keys at any depth, keeps them as plain data', () => {
    const value = JSON.parse(
      '{"__proto__": {"x": 1}, "constructor": {"prototype": {"isAdmin": true}}, "hasOwnProperty": [1], "toString": "kept", "valueOf": null, "list": [{"__proto__": 2, "prototype": {}, "ok": 1}]}',
    ) as Record<string, unknown>;
    expect(stripPrototypeKeys(value)).to.equal(value);
    expect(value).to.deep.equal({ toString: 'kept', valueOf: null, list: [{ ok: 1 }] });
    expect(Object.hasOwn(value, '__proto__')).to.equal(false);
  });

  it('a number under a removed key is gone, not reported', () => {
    expect(checkParsedJson(JSON.parse('{"__proto__": {"n": 1e400}, "constructor": [1e400]}'))).to.deep.equal({ ok: true, value: {} });
  });

  it('walks 100 000 levels without exhausting the stack, visits shared and cyclic references once, leaves class instances and frozen objects alone', () => {
    const deep: unknown = JSON.parse(`${'{"c":'.repeat(100_000)}1e400${'}'.repeat(100_000)}`);
    const check = checkParsedJson(deep);
    expect(check.ok).to.equal(false);
    expect(check.ok ? 0 : check.issues[0]!.path.length).to.equal(100_000);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(checkParsedJson(cyclic).ok).to.equal(true);
    class Holder {
      constructor(readonly constructorLike = { inner: 1 }) {}
    }
    const instance = Object.assign(new Holder(), { prototype: { a: 1 } });
    stripPrototypeKeys({ instance });
    expect(instance.prototype).to.deep.equal({ a: 1 });
    const frozen = Object.freeze(JSON.parse('{"__proto__": 1, "a": 1}') as object);
    expect(() => stripPrototypeKeys(frozen)).not.to.throw();
  });
});
