// Named errors for model files and sources. Every message names the file (and tensor when there is one)
// so a user can tell which download or which file on disk is bad. `code` survives structured cloning
// across a worker or a peer, where the class itself does not.

export interface ModelFileErrorInit {
  file: string;                 // path relative to the model root, or a URL / label
  tensor?: string;              // tensor name inside the file, when the problem is one tensor
  cause?: unknown;
}

/** Base class: something is wrong with a model file (or with reading it). */
export class ModelFileError extends Error {
  override name = 'ModelFileError';
  readonly code: string = 'model-file';
  readonly file: string;
  readonly tensor?: string;

  constructor(detail: string, init: ModelFileErrorInit) {
    const where = init.tensor ? `${init.file}, tensor "${init.tensor}"` : init.file;
    super(`${where}: ${detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.file = init.file;
    if (init.tensor) this.tensor = init.tensor;
  }
}

/** The file ends before the data it declares (header or tensor bytes). */
export class TruncatedFileError extends ModelFileError {
  override name = 'TruncatedFileError';
  override readonly code: string = 'truncated-file';
  /** The file's real length, when the source told it. */
  readonly fileSize?: number;
  constructor(detail: string, init: ModelFileErrorInit & { fileSize?: number }) {
    super(detail, init);
    if (init.fileSize !== undefined) this.fileSize = init.fileSize;
  }
}

/** A header or index is malformed: bad length prefix, JSON that does not parse, missing fields. */
export class HeaderError extends ModelFileError {
  override name = 'HeaderError';
  override readonly code: string = 'bad-header';
}

/** A tensor's byte range lies outside the file's data section, or disagrees with its dtype × shape. */
export class TensorOffsetError extends ModelFileError {
  override name = 'TensorOffsetError';
  override readonly code: string = 'bad-offsets';
}

/** A tensor the model needs is not in any file. */
export class TensorMissingError extends ModelFileError {
  override name = 'TensorMissingError';
  override readonly code: string = 'missing-tensor';
}

/** A tensor's shape disagrees with what config.json implies. */
export class ShapeMismatchError extends ModelFileError {
  override name = 'ShapeMismatchError';
  override readonly code: string = 'shape-mismatch';
}

/** A tensor's dtype is one we cannot read (or not the one the format requires). */
export class UnsupportedDTypeError extends ModelFileError {
  override name = 'UnsupportedDTypeError';
  override readonly code: string = 'unsupported-dtype';
}

/** An MLC shard's byte length differs from its record's nbytes. */
export class ShardSizeError extends ModelFileError {
  override name = 'ShardSizeError';
  override readonly code: string = 'shard-size';
}

/** An MLC shard's MD5 differs from its record's md5sum. */
export class ChecksumError extends ModelFileError {
  override name = 'ChecksumError';
  override readonly code: string = 'checksum';
}

/** config.json (or mlc-chat-config.json) is missing a field or holds an impossible value. */
export class ConfigError extends ModelFileError {
  override name = 'ConfigError';
  override readonly code: string = 'bad-config';
}

/** The checkpoint is not a Qwen3 or Qwen3 MoE model. The message names the architecture found. */
export class UnsupportedArchitectureError extends ConfigError {
  override name = 'UnsupportedArchitectureError';
  override readonly code: string = 'unsupported-architecture';
  readonly architecture: string;
  constructor(architecture: string, init: ModelFileErrorInit) {
    super(`unsupported architecture "${architecture}": pooled runs Qwen3 dense and Qwen3 MoE models (model_type "qwen3" / "qwen3_moe", GGUF "qwen3" / "qwen3moe")`, init);
    this.architecture = architecture;
  }
}

/** A GGUF tensor is stored in a ggml type pooled cannot read (IQ4_XS, Q3_K, ...), named. */
export class UnsupportedTensorTypeError extends UnsupportedDTypeError {
  override name = 'UnsupportedTensorTypeError';
  override readonly code: string = 'unsupported-tensor-type';
  readonly ggmlType: string;
  constructor(ggmlType: string, init: ModelFileErrorInit) {
    super(`ggml type ${ggmlType} is not supported (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)`, init);
    this.ggmlType = ggmlType;
  }
}

/** A split GGUF ("-00001-of-00003.gguf") whose other parts are not all there. */
export class SplitPartMissingError extends ModelFileError {
  override name = 'SplitPartMissingError';
  override readonly code: string = 'split-part-missing';
}

/** The tokenizer in a model's metadata is of a kind pooled cannot build (not byte-level BPE, unknown pre-tokenizer). */
export class UnsupportedTokenizerError extends ModelFileError {
  override name = 'UnsupportedTokenizerError';
  override readonly code: string = 'unsupported-tokenizer';
}

/** No weight files in a recognised format were found at the source. */
export class UnknownFormatError extends ModelFileError {
  override name = 'UnknownFormatError';
  override readonly code: string = 'unknown-format';
}

export interface ModelSourceErrorInit extends ModelFileErrorInit {
  url?: string;                 // the URL fetched, when the source is HTTP
  status?: number;              // HTTP status, when the server answered
}

/** Reading from the source failed: HTTP error, network error, file not found on disk. */
export class ModelSourceError extends ModelFileError {
  override name = 'ModelSourceError';
  override readonly code: string = 'source';
  readonly url?: string;
  readonly status?: number;
  constructor(detail: string, init: ModelSourceErrorInit) {
    super(detail, init);
    if (init.url !== undefined) this.url = init.url;
    if (init.status !== undefined) this.status = init.status;
  }
}

/** A whole-file read found more bytes than the file may have (a server padding its reply, a wrong file). */
export class FileTooLongError extends ModelSourceError {
  override name = 'FileTooLongError';
  override readonly code: string = 'too-long';
  constructor(detail: string, init: ModelSourceErrorInit, readonly maxBytes: number) {
    super(detail, init);
  }
}
