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

/** The checkpoint is not a Qwen3 dense model. The message names the architecture found. */
export class UnsupportedArchitectureError extends ConfigError {
  override name = 'UnsupportedArchitectureError';
  override readonly code: string = 'unsupported-architecture';
  readonly architecture: string;
  constructor(architecture: string, init: ModelFileErrorInit) {
    super(`unsupported architecture "${architecture}": pooled runs Qwen3 dense models (model_type "qwen3")`, init);
    this.architecture = architecture;
  }
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
