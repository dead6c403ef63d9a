// What the agent loop needs from a model: the room's engine, a replay script, or an HTTP endpoint.
import type { TokenConstraint } from '../model/engine-types.ts';
import type { ToolSchema } from './tool-types.ts';

export type FinishReason = 'stop' | 'cap' | 'context' | 'stopped' | 'error';

/** A chat message as the chat template takes it (arguments as objects, never JSON strings). */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: { name: string; arguments: Record<string, unknown> }[] }
  | { role: 'tool'; content: string; name?: string };

/** Per-token grammar: asked before each token, told which token was taken. */
export interface TokenMaskSource {
  /** null = free sampling for this token. */
  next(): TokenConstraint | null;
  accept(tokenId: number): void;
}

export interface GenerateRequest {
  prompt: number[];            // token ids of the whole rendered conversation
  maxNewTokens: number;        // answer cap
  stopTokens: number[];        // <|im_end|>, <|endoftext|>
  /** Position of the pinned checkpoint (end of system prompt + tools); undefined = none yet. */
  pinAt?: number;
  /** Grammar factory, asked once the model opens a tool call (mask per token after that). */
  mask?: (generatedSoFar: number[]) => TokenMaskSource | null;
  signal?: AbortSignal;
  onToken?: (tokenId: number, textSoFar: string) => void;
}

export interface GenerateUsage {
  promptTokens: number;        // length of the prompt
  promptComputed: number;      // tokens actually run through the layers
  promptReused: number;        // tokens served from the KV cache / checkpoints
  generated: number;
}

export interface GenerateResult {
  tokens: number[];            // sampled ids (without the stop token)
  text: string;
  finish: FinishReason;
  error?: string;
  usage: GenerateUsage;
  seconds: number;
}

export interface Backend {
  readonly name: string;
  readonly contextSize: number;
  readonly devices: number;
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Chat template with tools, thinking off, generation prompt added. */
  render(messages: ChatMessage[], tools: ToolSchema[]): string;
  generate(req: GenerateRequest): Promise<GenerateResult>;
}
