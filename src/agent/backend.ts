// What the agent loop needs from a model: the room's engine, a replay script, or an HTTP endpoint. The
// request and result are the model layer's generate types, extended only by what text-level callers need.
import type { GenerateOptions, GenerationResult, RecoverOutcome } from '../model/generate-types.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';

/** A chat message; an answer also keeps its text exactly as sampled, calls written in it (absent once compaction rewrote it). */
export type RequestMessage = ChatMessage & { sampled?: string };

/**
 * One answer to the whole rendered conversation: the model layer's GenerateOptions (answer cap, stop
 * tokens, pinned checkpoint, the call grammar as `constraint`, abort) plus the prompt and the text as it
 * streams. A backend that omits `sampling` uses its own default.
 */
export interface BackendRequest extends GenerateOptions {
  prompt: number[];            // token ids of the whole rendered conversation
  /** The same conversation as chat messages, for a server that renders the turns itself (chat completions). */
  messages?: RequestMessage[];
  /** The answer's text so far after each token, decoded from exact token bytes (whole characters). */
  onText?: (textSoFar: string) => void;
  /**
   * The closing answer at the step limit: the answer must not call a tool. `constraint` is then the
   * no-call grammar; a server that takes a grammar gets its no-call one (openai/gbnf.ts).
   */
  noCalls?: boolean;
}

/** The model layer's GenerationResult (ids, finish, error, note, stats) plus the answer's text. */
export interface BackendResult extends GenerationResult {
  text: string;
  /** An HTTP server's own token counts, shown beside ours (stats are counted with the model's tokenizer). */
  serverUsage?: { promptTokens: number; completionTokens: number };
  /** Something about the backend the timeline shows (once): a server whose token count disagrees with ours. */
  notice?: string;
}

export interface Backend {
  readonly name: string;
  readonly contextSize: number;
  readonly devices: number;
  /** Where the answers come from when not from our engine: a script, or a model server (the summary says so instead of devices). */
  readonly runsOn?: 'scripted' | 'server';
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Chat template with tools, thinking off, generation prompt added. */
  render(messages: ChatMessage[], tools: ToolSchema[]): string;
  generate(req: BackendRequest): Promise<BackendResult>;
  /** After an answer the room stopped (a device left): waits until it can run again (TokenGenerator.recover). */
  recover?(signal?: AbortSignal): Promise<RecoverOutcome>;
}
