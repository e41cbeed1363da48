import { expect } from 'chai';
import { derefJsonSchema } from '../schema/deref-json-schema.js';

describe('derefJsonSchema (spec §6.1)', () => {
  it('returns a schema without references unchanged (titles kept: it is not the zod path)', () => {
    const schema = { title: 'P', type: 'object', properties: { a: { type: 'string', title: 'A' } } };
    expect(derefJsonSchema(schema)).to.deep.equal(schema);
  });

  it('inlines a list item definition and drops $defs (kosong test_simple_ref)', () => {
    const schema = {
      type: 'object',
      properties: { todos: { type: 'array', items: { $ref: '#/$defs/Todo' } } },
      $defs: { Todo: { type: 'object', properties: { status: { enum: ['pending', 'done'], type: 'string' } }, title: 'Todo' } },
    };
    expect(derefJsonSchema(schema)).to.deep.equal({
      type: 'object',
      properties: {
        todos: { type: 'array', items: { type: 'object', properties: { status: { enum: ['pending', 'done'], type: 'string' } }, title: 'Todo' } },
      },
    });
  });

  it('inlines nested references two levels deep (kosong test_nested_ref), and `definitions` too', () => {
    const schema = {
      type: 'object',
      properties: { users: { type: 'array', items: { $ref: '#/definitions/User' } } },
      definitions: {
        User: { type: 'object', properties: { address: { $ref: '#/definitions/Address' } } },
        Address: { type: 'object', properties: { city: { type: 'string' } } },
      },
    };
    expect(derefJsonSchema(schema)).to.deep.equal({
      type: 'object',
      properties: {
        users: { type: 'array', items: { type: 'object', properties: { address: { type: 'object', properties: { city: { type: 'string' } } } } } },
      },
    });
  });

  it('does not modify its input', () => {
    const schema = { type: 'object', properties: { a: { $ref: '#/$defs/A' } }, $defs: { A: { type: 'string' } } };
    const copy = structuredClone(schema);
    derefJsonSchema(schema);
    expect(schema).to.deep.equal(copy);
  });

  it('keeps self-references and only the definitions they need (the original would loop forever)', () => {
    const schema = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/Node' }, label: { $ref: '#/$defs/Label' } },
      $defs: {
        Node: { type: 'object', properties: { label: { $ref: '#/$defs/Label' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } } },
        Label: { type: 'string', maxLength: 10 },
        Unused: { type: 'number' },
      },
    };
    expect(derefJsonSchema(schema)).to.deep.equal({
      type: 'object',
      properties: { root: { $ref: '#/$defs/Node' }, label: { type: 'string', maxLength: 10 } },
      $defs: {
        Node: {
          type: 'object',
          properties: { label: { type: 'string', maxLength: 10 }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
        },
      },
    });
  });

  it('never inlines the root (#)', () => {
    const schema = { type: 'object', properties: { next: { $ref: '#' } } };
    expect(derefJsonSchema(schema)).to.deep.equal(schema);
  });

  it('lets the use site annotate, and combines with allOf when a sibling would override validation', () => {
    const schema = {
      type: 'object',
      properties: {
        annotated: { $ref: '#/$defs/Id', description: 'the order id' },
        narrowed: { $ref: '#/$defs/Id', maxLength: 4 },
        clashing: { $ref: '#/$defs/Id', minLength: 2 },
      },
      $defs: { Id: { type: 'string', minLength: 1, description: 'an id' } },
    };
    expect(derefJsonSchema(schema)).to.deep.equal({
      type: 'object',
      properties: {
        annotated: { type: 'string', minLength: 1, description: 'the order id' },
        narrowed: { type: 'string', minLength: 1, description: 'an id', maxLength: 4 },
        clashing: { allOf: [{ type: 'string', minLength: 1, description: 'an id' }, { minLength: 2 }] },
      },
    });
  });

  it('leaves $ref-looking data (enum, const, default) and non-local references alone', () => {
    const schema = {
      type: 'object',
      properties: {
        data: { enum: [{ $ref: '#/nowhere' }], default: { $ref: '#/nowhere' } },
        remote: { $ref: 'https://example.com/schema.json' },
        anchor: { $ref: '#anchor' },
        $ref: { type: 'string' },
      },
    };
    expect(derefJsonSchema(schema)).to.deep.equal(schema);
  });

  it('decodes JSON Pointer escapes and array indexes', () => {
    const schema = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/a~1b' }, b: { $ref: '#/$defs/list/1' }, c: { $ref: '#/$defs/tilde~0' } },
      $defs: { 'a/b': { type: 'string' }, list: [{ type: 'null' }, { type: 'boolean' }], 'tilde~': { type: 'integer' } },
    };
    expect(derefJsonSchema(schema)).to.deep.equal({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'boolean' }, c: { type: 'integer' } },
    });
  });

  it('throws for a local reference that leads nowhere', () => {
    expect(() => derefJsonSchema({ properties: { a: { $ref: '#/$defs/Missing' } } })).to.throw('Unable to resolve reference path: #/$defs/Missing');
  });

  it('keeps a __proto__ property of a schema as a property, not a prototype', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as Record<string, unknown>;
    const result = derefJsonSchema(schema) as { properties: object };
    expect(Object.getPrototypeOf(result.properties)).to.equal(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(result.properties, '__proto__')?.value).to.deep.equal({ type: 'string' });
  });
});
