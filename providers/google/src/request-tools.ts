import type { Tool } from '@kosong/core';

/** A Gemini function declaration: the tool's JSON Schema goes as it is, in `parametersJsonSchema`. */
export interface FunctionDeclaration {
  readonly name: string;
  readonly description: string;
  readonly parametersJsonSchema: unknown;
}

/**
 * The `tools` of a Gemini request: one tool holding one function declaration per kosong tool
 * (kosong spec §7.6), or none when there are no tools (Gemini rejects an empty declaration list).
 */
export function toolsToGemini(tools: readonly Tool[]): { functionDeclarations: FunctionDeclaration[] }[] | undefined {
  if (tools.length === 0) return undefined;
  return [{ functionDeclarations: tools.map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters })) }];
}
