/**
 * Where a Gemini `thoughtSignature` travels in kosong: the `extras` key of the {@link ToolCall}
 * whose part carried it (the key of the Python original, so histories move between the two).
 * The value is the signature as the API sends it: base64 text.
 */
export const THOUGHT_SIGNATURE_KEY = 'thought_signature_b64';

/**
 * The signature the Gemini docs give for function calls that never had one (a history from another
 * model, or calls the client made up): gemini-3 models refuse an unsigned call in the current turn,
 * and this value tells them to skip the check.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';
