import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';

import { MessageList } from './message-list.js';
import { StepTimeline } from './step-timeline.js';
import { loadMessages, loadTimeline, saveMessages, saveTimeline } from './tab-storage.js';
import { TimedChatTransport } from './timed-transport.js';
import { TimelineRecorder } from './timeline-recorder.js';

/**
 * A live chat on the AI SDK's `useChat`: the conversation and the prompt on one side, the step
 * timeline on the other. A reload resumes the turn in flight (`resume: true`: `GET …/<id>/stream`).
 */
export function ChatView({ api, chatId, currentApiKey }: { readonly api: string; readonly chatId: string; readonly currentApiKey: () => string }) {
  const recorder = useMemo(() => new TimelineRecorder(loadTimeline(chatId)), [chatId]);
  const transport = useMemo(() => new TimedChatTransport(api, currentApiKey, recorder), [api, currentApiKey, recorder]);
  const initialMessages = useMemo(() => loadMessages(chatId), [chatId]);
  const { messages, sendMessage, status, error, stop, addToolApprovalResponse, clearError } = useChat({
    id: chatId,
    messages: initialMessages,
    transport,
    // Also without a key: a server may take requests without one (`kosong serve` with no keys, from
    // this machine); one that wants a key answers 401, and the page says so.
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [prompt, setPrompt] = useState('');

  // Kept between turns and when one starts; a message still streaming is replayed by the resume.
  useEffect(() => {
    if (status === 'streaming') return;
    saveMessages(chatId, messages);
    saveTimeline(chatId, recorder.endedTurns);
  }, [chatId, messages, recorder, status]);

  // Follows the answer as it streams, unless the reader scrolled up.
  const pane = useRef<HTMLElement>(null);
  const following = useRef(true);
  useEffect(() => {
    const element = pane.current;
    if (element !== null && following.current) element.scrollTop = element.scrollHeight;
  }, [messages]);
  const onScroll = () => {
    const element = pane.current;
    if (element !== null) following.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
  };

  const busy = status === 'submitted' || status === 'streaming';
  const send = useCallback(
    (event?: FormEvent) => {
      event?.preventDefault();
      if (busy || prompt.trim() === '') return;
      clearError();
      void sendMessage({ text: prompt });
      setPrompt('');
    },
    [busy, clearError, prompt, sendMessage],
  );
  // Stops the server's turn (POST …/<id>/stop: its stream ends with an `abort` chunk); if the server
  // has no turn to stop, or cannot be reached, only this page's stream is closed.
  const stopTurn = useCallback(async () => {
    const key = currentApiKey();
    try {
      const response = await fetch(`${api}/${encodeURIComponent(chatId)}/stop`, { method: 'POST', credentials: 'same-origin', headers: key === '' ? {} : { authorization: `Bearer ${key}` } });
      if (response.status === 204) return;
    } catch {
      // the server cannot be reached: close the stream here
    }
    await stop();
  }, [api, chatId, currentApiKey, stop]);
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) send(event);
  };
  const onApproval = useCallback(
    (id: string, approved: boolean) => {
      recorder.answer(id, approved);
      void addToolApprovalResponse({ id, approved });
    },
    [addToolApprovalResponse, recorder],
  );

  return (
    <main className="panes">
      <section className="chat" aria-label="chat" ref={pane} onScroll={onScroll}>
        <MessageList messages={messages} onApproval={onApproval} />
        {error !== undefined && (
          <p className="alert" role="alert">
            {error.message}
          </p>
        )}
        <form className="prompt" onSubmit={send}>
          <textarea value={prompt} onChange={(event) => setPrompt(event.target.value)} onKeyDown={onKeyDown} placeholder="Your message (Enter sends, Shift+Enter: a new line)" rows={4} aria-label="message" />
          <div className="actions">
            <span className="status" data-status={status}>
              {status}
            </span>
            {busy ? (
              <button type="button" onClick={() => void stopTurn()} title="Stops the turn on the server">
                Stop
              </button>
            ) : (
              <button type="submit" disabled={prompt.trim() === ''}>
                Send
              </button>
            )}
          </div>
        </form>
      </section>
      <section className="timeline" aria-label="step timeline">
        <h2>Steps</h2>
        <StepTimeline recorder={recorder} onApproval={onApproval} />
      </section>
    </main>
  );
}
