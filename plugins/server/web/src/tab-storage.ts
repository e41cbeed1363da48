import type { UIMessage } from 'ai';

import type { TurnTimeline } from './timeline-recorder.js';

const PREFIX = 'kosong.messages.';
const TIMELINE_PREFIX = 'kosong.timeline.';

// What a tab keeps of its chats in `sessionStorage`, for a reload: the messages, and the
// timeline's ended turns.

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

/** The ended turns of a chat's timeline as this tab last kept them; `[]` when none or unreadable. */
export function loadTimeline(chatId: string): TurnTimeline[] {
  try {
    const stored = JSON.parse(sessionStorage.getItem(TIMELINE_PREFIX + chatId) ?? '[]') as unknown;
    return Array.isArray(stored) ? (stored as TurnTimeline[]).filter((turn) => typeof turn?.endAt === 'number' && turn.cutHere !== true && Array.isArray(turn.steps) && Array.isArray(turn.approvedCalls)) : [];
  } catch {
    return [];
  }
}

/** Keeps the ended turns of a chat's timeline for a reload (a turn in flight is replayed by the resume instead). */
export function saveTimeline(chatId: string, turns: readonly TurnTimeline[]): void {
  try {
    sessionStorage.setItem(TIMELINE_PREFIX + chatId, JSON.stringify(turns));
  } catch {
    // storage full or refused: a reload then draws the resumed turn alone
  }
}

const RECENT = 'kosong.recentChats';
const MAX_RECENT = 20;

/** The ids of the chats this browser opened last, the latest first (`localStorage`: no keys, no messages). */
export function recentChats(): string[] {
  try {
    const stored = JSON.parse(localStorage.getItem(RECENT) ?? '[]') as unknown;
    return Array.isArray(stored) ? stored.filter((id): id is string => typeof id === 'string').slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

/** Puts `chatId` first in {@link recentChats}. */
export function rememberChat(chatId: string): void {
  try {
    localStorage.setItem(RECENT, JSON.stringify([chatId, ...recentChats().filter((id) => id !== chatId)].slice(0, MAX_RECENT)));
  } catch {
    // storage refused: no list
  }
}
