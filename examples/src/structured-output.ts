import { StructuredOutputError, createMessage, emptyToolset, step, structuredOutput } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import { z } from 'zod';

const Forecast = z.object({
  city: z.string(),
  celsius: z.number(),
  day: z.string().transform((text) => new Date(text)), // the model writes a date; you get a Date
});
const output = structuredOutput(Forecast, { name: 'forecast', description: 'The forecast for one city.' });

// The echo provider plays the script in the last user message: here, a model answering in JSON.
const answer = 'text: {"city": "Lyon", "celsius": 17, "day": "2026-06-01"}';
const result = await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset: emptyToolset, history: [createMessage('user', answer)], output });
const forecast = result.output!; // typed: { city: string; celsius: number; day: Date }
console.log(forecast.city, forecast.celsius, forecast.day.getUTCFullYear());
// Lyon 17 2026

try {
  const wrong = 'text: {"city": "Lyon", "celsius": "warm"}';
  await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset: emptyToolset, history: [createMessage('user', wrong)], output });
} catch (error) {
  if (!StructuredOutputError.isInstance(error)) throw error;
  console.log(error.failure, error.issues.map((issue) => issue.path.join('.')).join(', '));
  // invalid celsius, day
}
