// Errors crossing an engine worker (the WebGPU one and the WASM one) arrive as the same typed errors:
// an error whose class is known here (every engine error of ./engine-errors.ts, RangeError, TypeError, and
// those an engine registers, e.g. CpuUnsupportedError) is rebuilt as that class, so `instanceof` and
// `code` work on the page as in the worker; any other keeps its name, message, code and stack as a
// RemoteEngineError (comlink's default keeps only name, message and stack, as a plain Error). Install
// on both sides: the worker (throwing) and the page (receiving).
import * as Comlink from 'comlink';
import {
  ContextFullError, DraftVocabularyError, EngineError, EngineUsageError, PipelineError, PositionError, SamplingError, SnapshotLimitError, SnapshotMissingError,
} from './engine-errors.ts';

interface SerializedError { name: string; message: string; code?: string; stack?: string }

/** An error of a class not known on the receiving side: same name, message and code. */
export class RemoteEngineError extends Error {
  readonly code: string;
  constructor(e: SerializedError) {
    super(e.message);
    this.name = e.name;
    this.code = e.code ?? 'engine';
    if (e.stack) this.stack = e.stack;
  }
}

type ErrorClass = new (message: string) => Error;
const known = new Map<string, ErrorClass>();
for (const c of [EngineError, ContextFullError, PositionError, EngineUsageError, SamplingError, PipelineError, SnapshotMissingError, SnapshotLimitError, DraftVocabularyError, RangeError, TypeError]) {
  known.set(new c('').name, c);
}

/** Rebuild errors named like an instance of `c` as `c` (an engine's own error classes). */
export function registerRemoteError(c: ErrorClass): void {
  known.set(new c('').name, c);
}

function rebuild(e: SerializedError): Error {
  const C = known.get(e.name);
  if (!C) return new RemoteEngineError(e);
  const out = new C(e.message);
  if (e.stack) out.stack = e.stack;
  return out;
}

type ThrowHandler = Comlink.TransferHandler<{ value: unknown }, { isError: boolean; value: unknown }>;

export function installErrorTransfer(): void {
  const handler = Comlink.transferHandlers.get('throw') as unknown as ThrowHandler;
  const patched: ThrowHandler = {
    canHandle: handler.canHandle,
    serialize({ value }) {
      if (value instanceof Error) {
        const e = value as Error & { code?: unknown };
        const ser: SerializedError = { name: e.name, message: e.message, stack: e.stack };
        if (typeof e.code === 'string') ser.code = e.code;
        return [{ isError: true, value: ser }, []];
      }
      return [{ isError: false, value }, []];
    },
    deserialize(s) {
      if (s.isError) throw rebuild(s.value as SerializedError);
      throw s.value;
    },
  };
  Comlink.transferHandlers.set('throw', patched as unknown as Comlink.TransferHandler<unknown, unknown>);
}
