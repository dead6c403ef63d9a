// What a format reader hands the loader: where each tensor's bytes are, before any data is read.

import { TensorOffsetError } from '../errors.ts';
import { dtypeSize, shapeElements } from '../tensor-utils.ts';
import type { StoredDType } from '../types.ts';

export interface TensorEntry {
  name: string;                // name in the file
  file: string;                // path relative to the model root
  dtype: StoredDType;          // as stored
  shape: number[];
  start: number;               // absolute byte offsets in `file`, [start, end)
  end: number;
}

/** A file the loader must read whole (MLC shards: their md5 and size are checked). */
export interface WholeFile {
  file: string;
  nbytes: number;
  md5?: string;                // lowercase hex, when the record has one
}

export interface TensorCatalogue {
  format: 'safetensors' | 'mlc';
  /** Files that hold weights, for messages ("model.safetensors", "params_shard_3.bin"). */
  files: string[];
  tensors: Map<string, TensorEntry>;
  /** Present for formats read shard by shard (MLC); absent where tensors are read by range. */
  wholeFiles?: Map<string, WholeFile>;
  /** Index/header files read to build this catalogue, with their sizes in bytes. */
  metadataReads: { file: string; bytes: number }[];
}

/** The byte length dtype × shape demands must equal the entry's byte range. */
export function checkEntrySize(e: TensorEntry): void {
  const want = shapeElements(e.shape) * dtypeSize(e.dtype);
  if (e.end - e.start !== want) {
    throw new TensorOffsetError(
      `byte range [${e.start}, ${e.end}) holds ${e.end - e.start} bytes but ${e.dtype} [${e.shape}] needs ${want}`,
      { file: e.file, tensor: e.name });
  }
}

export function isShape(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((d) => typeof d === 'number' && Number.isSafeInteger(d) && d >= 0);
}
