// Errors crossing the engine worker keep their name, message, code and stack (comlink's default keeps
// only name, message and stack). Install on both sides: the worker (throwing) and the page (receiving).
import * as Comlink from 'comlink';

interface SerializedError { name: string; message: string; code?: string; stack?: string }

/** An error rebuilt on the receiving side: same name, message and code. */
export class RemoteEngineError extends Error {
  readonly code: string;
  constructor(e: SerializedError) {
    super(e.message);
    this.name = e.name;
    this.code = e.code ?? 'engine';
    if (e.stack) this.stack = e.stack;
  }
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
      if (s.isError) throw new RemoteEngineError(s.value as SerializedError);
      throw s.value;
    },
  };
  Comlink.transferHandlers.set('throw', patched as unknown as Comlink.TransferHandler<unknown, unknown>);
}
