// Errors crossing an engine worker (src/model/worker-errors.ts) arrive as the same typed errors: a known
// class is rebuilt as that class (instanceof and code hold on the page), a registered engine class too
// (the WASM engine's CpuUnsupportedError), anything else as a RemoteEngineError keeping name and code.
// Through comlink's own 'throw' transfer handler, serialized and deserialized as a postMessage would.
import * as Comlink from 'comlink';
import { describe, expect, it } from 'vitest';
import { CpuUnsupportedError } from '../../../src/cpu/errors.ts';
import { ContextFullError, EngineUsageError, PositionError } from '../../../src/model/engine-errors.ts';
import { installErrorTransfer, registerRemoteError, RemoteEngineError } from '../../../src/model/worker-errors.ts';

type Handler = Comlink.TransferHandler<{ value: unknown }, unknown>;

function across(e: unknown): unknown {
  installErrorTransfer();
  const h = Comlink.transferHandlers.get('throw') as unknown as Handler;
  const [wire] = h.serialize({ value: e });
  const cloned = structuredClone(wire);
  try {
    h.deserialize(cloned);
  } catch (got) {
    return got;
  }
  throw new Error('deserialize did not throw');
}

describe('errors across an engine worker', () => {
  it('rebuilds engine errors as their classes, with message, code and stack', () => {
    for (const [e, C, code] of [[new PositionError('layer 0: position 5'), PositionError, 'bad-position'], [new ContextFullError('full'), ContextFullError, 'context-full'], [new EngineUsageError('no head'), EngineUsageError, 'engine-usage']] as const) {
      const got = across(e) as Error & { code: string };
      expect(got).toBeInstanceOf(C);
      expect(got.message).toBe(e.message);
      expect(got.code).toBe(code);
      expect(got.stack).toBe(e.stack);
    }
    expect(across(new RangeError('token id 9 outside [0, 4)'))).toBeInstanceOf(RangeError);
  });

  it('rebuilds a registered engine class; an unknown one keeps its name and code', () => {
    registerRemoteError(CpuUnsupportedError);
    const cpu = across(new CpuUnsupportedError('a q8_0 cache')) as Error;
    expect(cpu).toBeInstanceOf(CpuUnsupportedError);
    expect(cpu.name).toBe('CpuUnsupportedError');
    const odd = Object.assign(new Error('the adapter was lost'), { name: 'GPULostError', code: 'gpu-lost' });
    const got = across(odd) as RemoteEngineError;
    expect(got).toBeInstanceOf(RemoteEngineError);
    expect(got).toMatchObject({ name: 'GPULostError', code: 'gpu-lost', message: 'the adapter was lost' });
  });
});
