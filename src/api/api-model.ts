// What the endpoint runs on: the room's model as the agent sees it (its queued Backend), the model's call
// format and grammars, and the id clients name it by.
import type { Backend } from '../agent/backend.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import { GrammarCache } from './tool-choice.ts';

export interface ApiModel {
  /** The model id /v1/models lists and requests name. */
  id: string;
  /** The Backend the agent uses too, behind the shared queue (generate-queue.ts). */
  backend: Backend;
  tokenizer: Tokenizer;
  format: ToolFormat;
  grammars: GrammarCache;
}

export function apiModel(id: string, backend: Backend, tokenizer: Tokenizer, format: ToolFormat): ApiModel {
  return { id, backend, tokenizer, format, grammars: new GrammarCache(tokenizer, format) };
}
