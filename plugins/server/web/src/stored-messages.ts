import type { UIMessage } from 'ai';

const PREFIX = 'kosong.messages.';

/**
 * The messages of a chat as this tab last kept them (`sessionStorage`), so that a reload shows the
 * conversation again while the resumed stream replays the turn in flight. `[]` when none or unreadable.
 */
export function loadMessages(chatId: string): UIMessage[] {
  try {
    const stored = JSON.parse(sessionStorage.getItem(PREFIX + chatId) ?? '[]') as unknown;
    return Array.isArray(stored) ? (stored as UIMessage[]) : [];
  } catch {
    return [];
  }
}

/**
 * Keeps the messages of a chat for a reload. Only between turns and at a turn's start: a message
 * still streaming is not kept, since the resumed stream replays it from its start.
 */
export function saveMessages(chatId: string, messages: readonly UIMessage[]): void {
  try {
    sessionStorage.setItem(PREFIX + chatId, JSON.stringify(messages));
  } catch {
    // storage full or refused: a reload then starts from the resumed turn alone
  }
}
