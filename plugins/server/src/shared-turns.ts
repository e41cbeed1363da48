/**
 * Where the running turns of a chat handler are shared with the other processes that serve the same
 * chats (`redisTurns(redis)`): each turn's chunks, so that a resume reaching another process reads
 * the turn from its start; and stops, so that a stop reaching another process stops the turn.
 */
export interface SharedTurns {
  /** A turn of chat `chatId` of `tenant` begins here: its frames are written to the store as they come. */
  begin(tenant: string, chatId: string): SharedTurnWriter;
  /**
   * The frames of the chat's turn running in another process, from its first one and then live,
   * UTF-8 encoded; `undefined` when it has none (none ever ran, it ended, or it was not kept whole).
   */
  resume(tenant: string, chatId: string): Promise<ReadableStream<Uint8Array> | undefined>;
  /** Asks the process that runs the chat's turn to stop it; resolves with whether a turn was running. */
  stop(tenant: string, chatId: string): Promise<boolean>;
  /** Tells `listener` of every stop asked for (by any process). */
  onStop(listener: (tenant: string, chatId: string) => void): void;
  /** Releases what it holds (its subscriptions; not the connection it was given). */
  close(): Promise<void>;
}

/** The frames of one turn, as they go to a {@link SharedTurns} store. */
export interface SharedTurnWriter {
  /** One more frame (in order). */
  write(frame: string): void;
  /** The turn ended: readers end once they read every frame. */
  end(): void;
  /** The turn is not to be resumed from the store (it outgrew its bound, or was refused): its frames go. */
  drop(): void;
}
