/**
 * The structured-output case of the provider conformance suite: every provider asks for the JSON
 * Schema it is given (with its API's native feature, read back from the wire by the adapter) or
 * refuses with an `UnsupportedOutputError`; the runtime parses and validates the answer.
 *
 * @module
 */
import { StructuredOutputError, UnsupportedOutputError, generate, type ChatProvider } from '@kosong/core';
import { expect } from 'chai';
import { z } from 'zod';
import type { ConformanceAdapter } from './conformance.js';

const Weather = z.object({ city: z.string(), celsius: z.number(), days: z.array(z.string()) });

/** Registers the structured-output tests for one adapter (inside its conformance suite). */
export function structuredOutputCases(adapter: ConformanceAdapter): void {
  describe('structured output: the provider asks for the schema natively (or refuses it with a typed error); the answer is parsed and validated', () => {
    /** The JSON Schema the provider sent for the output, as the adapter reads it back. */
    async function sentSchema(provider: ChatProvider): Promise<Record<string, unknown>> {
      if (!adapter.sentOutput) expect.fail(`the ${adapter.name} adapter must implement sentOutput() to show what the provider sent`);
      const schema = await adapter.sentOutput(provider);
      expect(schema, 'the request carried no output schema').to.be.an('object');
      return schema!;
    }

    it('a zod schema: sent as JSON Schema, the answer (in several deltas) typed and validated', async () => {
      const json = '{"city": "Paris", "celsius": 21.5, "days": ["mon", "tue"]}';
      const { provider, history } = await adapter.prime({ kind: 'text', chunks: [json.slice(0, 9), json.slice(9, 30), json.slice(30)] });
      const result = await generate({ provider, systemPrompt: '', history: [...history], output: Weather });
      const output: { city: string; celsius: number; days: string[] } | undefined = result.output;
      expect(output).to.deep.equal({ city: 'Paris', celsius: 21.5, days: ['mon', 'tue'] });
      const schema = await sentSchema(provider);
      expect(Object.keys(schema['properties'] as object)).to.have.members(['city', 'celsius', 'days']);
    });

    it('an answer that does not match: a StructuredOutputError with the text and the issues', async () => {
      const json = '{"city": 7, "celsius": "hot", "days": []}';
      const { provider, history } = await adapter.prime({ kind: 'text', chunks: [json] });
      const caught = await generate({ provider, systemPrompt: '', history: [...history], output: Weather }).catch((e: unknown) => e);
      expect(StructuredOutputError.isInstance(caught), String(caught)).to.equal(true);
      expect(caught).to.include({ failure: 'invalid', text: json });
      expect((caught as StructuredOutputError).issues.map((issue) => issue.path[0])).to.have.members(['city', 'celsius']);
    });

    it('a schema whose root is no object: asked for as {"value": …}, or refused with an UnsupportedOutputError', async () => {
      const { provider, history } = await adapter.prime({ kind: 'text', chunks: ['{"value": ["a", "b"]}'] });
      const outcome = await generate({ provider, systemPrompt: '', history: [...history], output: z.array(z.string()) }).catch((e: unknown) => e);
      if (UnsupportedOutputError.isInstance(outcome)) {
        expect(outcome).to.include({ provider: provider.name });
        return;
      }
      expect((outcome as { output?: unknown }).output).to.deep.equal(['a', 'b']);
      const schema = await sentSchema(provider);
      expect(Object.keys(schema['properties'] as object)).to.deep.equal(['value']);
    });
  });
}
