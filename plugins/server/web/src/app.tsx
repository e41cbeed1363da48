import { useEffect, useState, type FormEvent } from 'react';

import { useApiKey } from './api-key.js';
import { ChatView } from './chat-view.js';
import { SavedChatView } from './saved-chat-view.js';
import { recentChats, rememberChat } from './tab-storage.js';

/** What the address's hash opens: `#chat=<id>` (live), `#saved=<id>` (read-only). */
type View = { readonly kind: 'chat' | 'saved'; readonly chatId: string };

const CHAT_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

function viewOf(hash: string): View | undefined {
  const match = /^#(chat|saved)=(.+)$/.exec(hash);
  if (!match) return undefined;
  const chatId = decodeURIComponent(match[2]!);
  return CHAT_ID.test(chatId) ? { kind: match[1] as View['kind'], chatId } : undefined;
}

function newChat(): View {
  return { kind: 'chat', chatId: crypto.randomUUID() };
}

/** The page: the key field and the chat's controls on top, then the chat (or a saved one) and its step timeline. */
export function App({ api }: { readonly api: string }) {
  const { apiKey, setApiKey, currentApiKey } = useApiKey();
  const [view, setView] = useState<View>(() => viewOf(location.hash) ?? newChat());
  const [savedId, setSavedId] = useState('');

  useEffect(() => {
    const hash = `#${view.kind}=${encodeURIComponent(view.chatId)}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
    if (view.kind === 'chat') rememberChat(view.chatId);
  }, [view]);
  useEffect(() => {
    const onHash = () => setView((current) => viewOf(location.hash) ?? current);
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const openSaved = (event: FormEvent) => {
    event.preventDefault();
    const chatId = savedId.trim();
    if (CHAT_ID.test(chatId)) setView({ kind: 'saved', chatId });
  };

  return (
    <>
      <header>
        <h1>kosong</h1>
        <form className="api-key" onSubmit={(event) => event.preventDefault()}>
          <label>
            API key <input type="password" name="api-key" autoComplete="off" value={apiKey} onChange={(event) => setApiKey(event.target.value.trim())} placeholder="sk-…" />
          </label>
        </form>
        <span className="chat-id">
          {view.kind === 'saved' ? 'saved chat' : 'chat'} <code>{view.chatId}</code>
        </span>
        <button type="button" onClick={() => setView(newChat())}>
          New chat
        </button>
        {view.kind === 'chat' && (
          <button type="button" onClick={() => setView({ kind: 'saved', chatId: view.chatId })}>
            Saved copy
          </button>
        )}
        <form onSubmit={openSaved} className="open-saved">
          <input name="saved-chat-id" list="recent-chats" value={savedId} onChange={(event) => setSavedId(event.target.value)} placeholder="chat id" aria-label="saved chat id" />
          <datalist id="recent-chats">
            {recentChats().map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
          <button type="submit" disabled={!CHAT_ID.test(savedId.trim())}>
            Open saved
          </button>
        </form>
      </header>
      {view.kind === 'chat' ? <ChatView key={view.chatId} api={api} chatId={view.chatId} currentApiKey={currentApiKey} /> : <SavedChatView key={view.chatId} api={api} chatId={view.chatId} apiKey={apiKey} />}
    </>
  );
}
