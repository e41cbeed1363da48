import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './app.js';

/** The chat route, from the page's `<meta name="kosong-api">`: a path of this origin only (the key never goes elsewhere). */
function chatApi(): string {
  const api = document.querySelector<HTMLMetaElement>('meta[name="kosong-api"]')?.content ?? '/api/chat';
  return /^\/(?!\/)[^\s\\]*$/.test(api) ? api.replace(/\/+$/, '') : '/api/chat';
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={chatApi()} />
  </StrictMode>,
);
