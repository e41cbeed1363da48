import type { JsonSchema } from '@kosong/core';
import { expect } from 'chai';

import { ensurePropertyTypes } from '../index.js';

/** The type `ensurePropertyTypes` gives one property schema. */
function typeOf(property: Record<string, unknown>): unknown {
  const result = ensurePropertyTypes({ type: 'object', properties: { p: property } }) as { properties: { p: Record<string, unknown> } };
  return result.properties.p['type'];
}

describe('ensurePropertyTypes (kosong spec §6.2)', () => {
  it('fills a missing type on an enum-only property and keeps the rest', () => {
    const schema = {
      type: 'object',
      properties: { path: { type: 'string' }, truncateMode: { enum: ['head', 'tail'], description: 'Where to cut.' } },
      required: ['path'],
    };
    expect(ensurePropertyTypes(schema)).to.deep.equal({
      type: 'object',
      properties: { path: { type: 'string' }, truncateMode: { enum: ['head', 'tail'], description: 'Where to cut.', type: 'string' } },
      required: ['path'],
    });
  });

  it('does not modify its input', () => {
    const schema = { type: 'object', properties: { a: { enum: [1, 2] }, b: { items: { enum: ['x'] } } } };
    const before = structuredClone(schema);
    ensurePropertyTypes(schema);
    expect(schema).to.deep.equal(before);
  });

  it('infers the type from enum values', () => {
    expect(typeOf({ enum: ['a', 'b'] })).to.equal('string');
    expect(typeOf({ enum: [1, 2, 3] })).to.equal('integer');
    expect(typeOf({ enum: [1.5, 2] })).to.equal('number');
    expect(typeOf({ enum: [true, false] })).to.equal('boolean');
    expect(typeOf({ enum: [null] })).to.equal('null');
    expect(typeOf({ enum: [true, 1] })).to.equal('string');
    expect(typeOf({ enum: ['a', 1] })).to.equal('string');
    expect(typeOf({ enum: [{ a: 1 }, { a: 2 }] })).to.equal('object');
    expect(typeOf({ enum: [[1, 2], [3]] })).to.equal('array');
  });

  it('reads 1.0 as an integer, unlike Python (JavaScript has no distinct float 1.0)', () => {
    expect(typeOf({ enum: [1.0, 2] })).to.equal('integer');
  });

  it('infers the type from const', () => {
    expect(typeOf({ const: 'event' })).to.equal('string');
    expect(typeOf({ const: { kind: 'default' } })).to.equal('object');
    expect(typeOf({ const: [] })).to.equal('array');
  });

  it('infers structural types before falling back to string', () => {
    expect(typeOf({ description: 'Some value.' })).to.equal('string');
    expect(typeOf({ properties: { a: { type: 'string' } }, required: ['a'] })).to.equal('object');
    expect(typeOf({ additionalProperties: { type: 'string' } })).to.equal('object');
    expect(typeOf({ items: { type: 'string' } })).to.equal('array');
    expect(typeOf({ minItems: 1, maxItems: 3 })).to.equal('array');
    expect(typeOf({ format: 'date-time' })).to.equal('string');
    expect(typeOf({ pattern: '^a' })).to.equal('string');
    expect(typeOf({ minimum: 0, maximum: 9 })).to.equal('number');
  });

  it('leaves combinators alone but normalises the branches of anyOf', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        choice: { anyOf: [{ type: 'string' }, { enum: [1, 2] }] },
        ref: { $ref: '#/$defs/x' },
        negated: { not: { type: 'string' } },
        conditional: { if: { minimum: 1 }, then: { maximum: 2 }, else: { enum: ['a'] } },
      },
    };
    expect(ensurePropertyTypes(schema)).to.deep.equal({
      type: 'object',
      properties: {
        choice: { anyOf: [{ type: 'string' }, { enum: [1, 2], type: 'integer' }] },
        ref: { $ref: '#/$defs/x' },
        negated: { not: { type: 'string' } },
        conditional: { if: { minimum: 1 }, then: { maximum: 2 }, else: { enum: ['a'] } },
      },
    });
  });

  it('recurses into nested objects, items and additionalProperties; the root never gets a type', () => {
    const schema: JsonSchema = {
      properties: {
        nested: { type: 'object', properties: { choice: { enum: ['x', 'y'] } } },
        items_list: { type: 'array', items: { enum: [1, 2] } },
        tuple: { type: 'array', items: [{ enum: [true] }, { const: 'k' }] },
        free_map: { type: 'object', additionalProperties: { enum: [1.5] } },
      },
    };
    expect(ensurePropertyTypes(schema)).to.deep.equal({
      properties: {
        nested: { type: 'object', properties: { choice: { enum: ['x', 'y'], type: 'string' } } },
        items_list: { type: 'array', items: { enum: [1, 2], type: 'integer' } },
        tuple: { type: 'array', items: [{ enum: [true], type: 'boolean' }, { const: 'k', type: 'string' }] },
        free_map: { type: 'object', additionalProperties: { enum: [1.5], type: 'number' } },
      },
    });
  });

  it('passes an already typed schema through unchanged', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer', description: 'A' }, b: { type: 'array', items: { type: 'string' } } }, required: ['a'] };
    expect(ensurePropertyTypes(schema)).to.deep.equal(schema);
  });
});
