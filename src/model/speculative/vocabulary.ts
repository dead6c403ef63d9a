// A draft model must share the target's tokenizer: its token ids are fed to the target as they are and its
// distribution q is compared with the target's p id by id. What can be checked without reading two
// tokenizer files byte by byte: the embedding rows (config vocab_size), the tokenizer's id count (base
// vocabulary + added tokens) and the ids of the named special tokens (chat, tool call, think). Qwen3-0.6B
// and Qwen3-8B / 30B-A3B agree on all three (151,936 rows, 151,669 ids, <|im_end|> = 151645, ...).
import { DraftVocabularyError } from '../engine-errors.ts';
import type { SpecialTokenIds } from '../tokenizer.ts';
import type { ModelConfig } from '../types.ts';

export interface Vocabulary {
  /** Embedding and head rows (config vocab_size). */
  rows: number;
  /** Ids the tokenizer knows (base vocabulary + added tokens); absent when no tokenizer was read. */
  tokenizerIds?: number;
  /** The named special tokens' ids; absent when no tokenizer was read. */
  special?: Readonly<SpecialTokenIds>;
}

/** A model's vocabulary from its config and, when it was read, its tokenizer. */
export function vocabularyOf(config: Pick<ModelConfig, 'vocabSize'>, tokenizer?: { vocabSize: number; special: SpecialTokenIds }): Vocabulary {
  return { rows: config.vocabSize, ...(tokenizer ? { tokenizerIds: tokenizer.vocabSize, special: tokenizer.special } : {}) };
}

/** The differences between two vocabularies, in words (empty: the same). */
export function vocabularyDifferences(target: Vocabulary, draft: Vocabulary): string[] {
  const out: string[] = [];
  if (target.rows !== draft.rows) out.push(`vocabulary size ${draft.rows} (the target's: ${target.rows})`);
  if ((target.tokenizerIds === undefined) !== (draft.tokenizerIds === undefined)) {
    out.push(`a tokenizer on one side only (${target.tokenizerIds === undefined ? 'the draft' : 'the target'} has one)`);
  } else if (target.tokenizerIds !== draft.tokenizerIds) {
    out.push(`${draft.tokenizerIds} tokenizer ids (the target's: ${target.tokenizerIds})`);
  }
  if (target.special && draft.special) {
    const names = new Set([...Object.keys(target.special), ...Object.keys(draft.special)]) as Set<keyof SpecialTokenIds>;
    for (const name of names) {
      const a = target.special[name], b = draft.special[name];
      if (a !== b) out.push(`special token ${name} = ${b ?? 'none'} (the target's: ${a ?? 'none'})`);
    }
  }
  return out;
}

/** Throws DraftVocabularyError naming every difference when the draft's vocabulary is not the target's. */
export function checkSameVocabulary(target: Vocabulary, draft: Vocabulary, draftLabel = 'the draft model'): void {
  const diff = vocabularyDifferences(target, draft);
  if (diff.length > 0) throw new DraftVocabularyError(`${draftLabel} does not share the target's tokenizer: ${diff.join('; ')}`);
}
