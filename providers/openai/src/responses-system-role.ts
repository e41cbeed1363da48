/** Names of OpenAI's own models: GPT, the o-series, ChatGPT, Codex and computer-use models. */
const OPENAI_MODEL = /^(gpt-|o\d|chatgpt-|codex-|computer-use-)/i;

/**
 * The role the system prompt takes for a model: `developer` for OpenAI's own models (the role the
 * Responses API gives instructions from the developer; kosong spec §7.4 `is_openai_model`), `system`
 * for any other model behind a compatible endpoint. Unlike the Python original, which looks the name
 * up in the SDK's list of models, any name of an OpenAI model family counts, so newer models do too.
 */
export function systemRoleFor(model: string): 'system' | 'developer' {
  return OPENAI_MODEL.test(model) ? 'developer' : 'system';
}
