import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';

import { MessageList } from './message-list.js';
import { NO_API_KEY, WRONG_API_KEY } from './timed-transport.js';
import { shortText } from './timeline-recorder.js';

type Loaded = { readonly state: 'loading' } | { readonly state: 'error'; readonly message: string } | { readonly state: 'loaded'; readonly messages: UIMessage[] };

/** A saved chat, read-only: its stored conversation (`GET <api>/<id>/messages`) and its steps, without timings. */
export function SavedChatView({ api, chatId, apiKey }: { readonly api: string; readonly chatId: string; readonly apiKey: string }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  useEffect(() => {
    const abort = new AbortController();
    setLoaded({ state: 'loading' });
    void (async () => {
      try {
        const response = await fetch(`${api}/${encodeURIComponent(chatId)}/messages`, { headers: apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` }, credentials: 'same-origin', signal: abort.signal });
        if (response.status === 401) return setLoaded({ state: 'error', message: apiKey === '' ? NO_API_KEY : WRONG_API_KEY });
        const body = (await response.json()) as { messages?: UIMessage[]; error?: { message?: string } };
        if (!response.ok || !Array.isArray(body.messages)) return setLoaded({ state: 'error', message: `The saved chat cannot be read (${response.status}): ${body.error?.message ?? 'no messages'}` });
        setLoaded({ state: 'loaded', messages: body.messages });
      } catch (error) {
        if (!abort.signal.aborted) setLoaded({ state: 'error', message: `The saved chat cannot be read: ${(error as Error).message}` });
      }
    })();
    return () => abort.abort();
  }, [api, chatId, apiKey]);

  return (
    <main className="panes saved">
      <section className="chat" aria-label="saved chat">
        <p className="note">Saved chat {chatId}, read-only.</p>
        {loaded.state === 'loading' && <p className="note">Loading…</p>}
        {loaded.state === 'error' && (
          <p className="alert" role="alert">
            {loaded.message}
          </p>
        )}
        {loaded.state === 'loaded' && (loaded.messages.length === 0 ? <p className="note">This chat has no messages.</p> : <MessageList messages={loaded.messages} />)}
      </section>
      <section className="timeline" aria-label="steps of the saved chat">
        <h2>Steps</h2>
        <p className="note">A saved chat keeps its steps, not their timings.</p>
        {loaded.state === 'loaded' && <SavedSteps messages={loaded.messages} />}
      </section>
    </main>
  );
}

/** The steps of the assistant messages (split at `step-start` parts), with their tool calls in call order. */
function SavedSteps({ messages }: { readonly messages: readonly UIMessage[] }) {
  const steps: { key: string; tools: { id: string; text: string; state: string }[]; text: number }[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.parts) {
      if (part.type === 'step-start' || steps.length === 0) steps.push({ key: `${message.id}-${steps.length}`, tools: [], text: 0 });
      const step = steps.at(-1)!;
      if (part.type === 'text') step.text += part.text.length;
      if (part.type === 'dynamic-tool') {
        const result = part.state === 'output-available' ? shortText(part.output) : part.state === 'output-error' ? part.errorText : part.state;
        step.tools.push({ id: part.toolCallId, text: `${part.toolName} → ${result}`, state: part.state });
      }
    }
  }
  return (
    <ol className="saved-steps">
      {steps.map((step, index) => (
        <li key={step.key} data-step={index}>
          step {index + 1}: {step.text} characters of text
          {step.tools.length > 0 && (
            <ul>
              {step.tools.map((tool) => (
                <li key={tool.id} className="tool" data-tool-call-id={tool.id} data-state={tool.state}>
                  {tool.text}
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ol>
  );
}
