import { useCallback, useRef, useState } from 'react';

const KEY = 'kosong.apiKey';

/**
 * The API key of the key field, kept in `sessionStorage` (this tab only, gone when it closes): the
 * current value, a setter, and a getter that always reads the latest (for the transport's headers).
 */
export function useApiKey(): { readonly apiKey: string; readonly setApiKey: (key: string) => void; readonly currentApiKey: () => string } {
  const [apiKey, setState] = useState(() => sessionStorage.getItem(KEY) ?? '');
  const latest = useRef(apiKey);
  const setApiKey = useCallback((key: string) => {
    latest.current = key;
    setState(key);
    if (key === '') sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, key);
  }, []);
  const currentApiKey = useCallback(() => latest.current, []);
  return { apiKey, setApiKey, currentApiKey };
}
