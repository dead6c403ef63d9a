// The WebGPU row's bench settings (src/gpu/bench-settings.ts): what harness/engine.ts and the CPU bench's
// page pass in the engine worker's load request is read as the engine's options, and anything else is
// refused by name (the request crossed from another global).
import { describe, expect, it } from 'vitest';
import { benchSettings } from '../../../src/gpu/bench-settings.ts';
import { EngineUsageError } from '../../../src/model/engine-errors.ts';

describe('the WebGPU row\'s bench settings', () => {
  it('reads f16=on|off and topk=WGxITEMS; none given, none set', () => {
    expect(benchSettings({})).toEqual({});
    expect(benchSettings({ f16: 'off' })).toEqual({ useF16: false });
    expect(benchSettings({ f16: 'on', topk: '64x4' })).toEqual({ useF16: true, topk: { WG: 64, ITEMS: 4 } });
  });

  it('refuses anything else by name', () => {
    expect(() => benchSettings({ f16: '0' })).toThrow(EngineUsageError);
    expect(() => benchSettings({ topk: '64*4' })).toThrow(/topk must be WGxITEMS/);
    expect(() => benchSettings({ topk: '99999x4' })).toThrow(EngineUsageError);
  });
});
