// Choosing a device's engine from its probe (src/room/engine-choice.ts, over the engine table
// src/engines/table.ts), the wasm32 cap on a WASM device's offer (its row's, device side and in the
// host's deal), the card's names, and the hello carrying them.
import { describe, expect, test } from 'vitest';
import { chooseEngine, engineBudgetBytes, type EngineProbe } from '../../../src/room/engine-choice.ts';
import { wasmLabel, wasmThreads, WASM32_MEMORY_BYTES } from '../../../src/cpu/threads-here.ts';
import { ENGINES } from '../../../src/engines/table.ts';
import { measureCapabilities } from '../../../src/room/capabilities.ts';
import { dealDevices } from '../../../src/room/host-deal.ts';
import { HostDevice } from '../../../src/room/host-device.ts';
import { decodeFrame, encodeFrame, type DeviceCaps, type Frame } from '../../../src/room/protocol.ts';

const GiB = 2 ** 30;
const gpuReal: EngineProbe = { engine: 'webgpu', speed: 40, label: 'WebGPU · Apple M2', software: false };
const gpuSoft: EngineProbe = { engine: 'webgpu', speed: 0.4, label: 'WebGPU · SwiftShader (fallback)', software: true };
const wasm: EngineProbe = { engine: 'wasm', speed: 3.1, label: 'CPU · 2 threads · SIMD' };
const ref: EngineProbe = { engine: 'reference', speed: 0.9, label: 'reference (JS on the CPU)' };

describe('chooseEngine', () => {
  test('a real GPU beats the CPU; on a software adapter the WASM engine wins', () => {
    expect(chooseEngine([gpuReal, wasm, ref], ENGINES)).toMatchObject({ engine: 'webgpu', speed: 40, label: 'WebGPU · Apple M2' });
    const c = chooseEngine([gpuSoft, wasm, ref], ENGINES);
    expect(c).toMatchObject({ engine: 'wasm', speed: 3.1, label: 'CPU · 2 threads · SIMD' });
    expect(c.why).toBe('fastest measured: wasm 3.10 GFLOP/s over webgpu 0.400, reference 0.900');
  });

  test('a software adapter faster than this CPU\'s WASM is still chosen (measured, not assumed)', () => {
    expect(chooseEngine([{ ...gpuSoft, speed: 5 }, wasm], ENGINES).engine).toBe('webgpu');
  });

  test('the reference is never offered while WebGPU or WASM runs, even when its probe is faster', () => {
    expect(chooseEngine([{ ...wasm, speed: 0.5 }, { ...ref, speed: 2 }], ENGINES).engine).toBe('wasm');
  });

  test('failed probes are skipped; no WebGPU and no WASM leaves the reference; nothing at all throws naming each', () => {
    const noGpu: EngineProbe = { engine: 'webgpu', speed: 0, label: 'WebGPU', failed: 'this browser has no WebGPU' };
    expect(chooseEngine([noGpu, wasm, ref], ENGINES).engine).toBe('wasm');
    const noWasm: EngineProbe = { engine: 'wasm', speed: 0, label: 'wasm', failed: 'WebAssembly SIMD is not supported' };
    const c = chooseEngine([noGpu, noWasm, ref], ENGINES);
    expect(c.engine).toBe('reference');
    expect(c.why).toMatch(/this browser has no WebGPU.*WebAssembly SIMD is not supported/);
    expect(() => chooseEngine([noGpu, noWasm], ENGINES)).toThrow('no engine runs on this device: webgpu: this browser has no WebGPU; wasm: WebAssembly SIMD is not supported');
    expect(() => chooseEngine([noGpu, { ...wasm, speed: Number.NaN }], ENGINES)).toThrow(/no engine runs/);
  });

  test('?engine= forces one, with its own probe\'s speed; a failed forced probe leaves the speed 0 and says why', () => {
    expect(chooseEngine([gpuReal, wasm, ref], ENGINES, 'reference')).toMatchObject({ engine: 'reference', speed: 0.9, why: 'forced by ?engine=reference' });
    expect(chooseEngine([wasm], ENGINES, 'wasm')).toMatchObject({ engine: 'wasm', speed: 3.1 });
    const f = chooseEngine([{ engine: 'webgpu', speed: 0, label: 'WebGPU', failed: 'this browser has no WebGPU' }], ENGINES, 'webgpu');
    expect(f).toMatchObject({ engine: 'webgpu', speed: 0 });
    expect(f.why).toBe('forced by ?engine=webgpu (its probe failed: this browser has no WebGPU)');
  });
});

describe('the wasm32 cap and the names', () => {
  test('a WASM device offers at most 4 GiB; other engines keep their offer', () => {
    expect(WASM32_MEMORY_BYTES).toBe(4 * GiB);
    expect(engineBudgetBytes(ENGINES, 'wasm', 6 * GiB)).toBe(4 * GiB);
    expect(engineBudgetBytes(ENGINES, 'wasm', 3 * GiB)).toBe(3 * GiB);
    expect(engineBudgetBytes(ENGINES, 'webgpu', 6 * GiB)).toBe(6 * GiB);
    expect(engineBudgetBytes(ENGINES, 'reference', 6 * GiB)).toBe(6 * GiB);
    expect(ENGINES.wasm!.capNote(6 * GiB)).toBe(' · at most 4 GiB on the CPU engine (a wasm32 memory)');
    expect(ENGINES.wasm!.capNote(3 * GiB)).toBe('');
    expect(ENGINES.webgpu!.capNote(6 * GiB)).toBe('');
  });

  test('the host deals a WASM guest at most 4 GiB whatever its hello says', () => {
    const caps = (engine: DeviceCaps['engine'], bytes: number): DeviceCaps => ({
      adapter: 'x', engine, isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0, deviceMemoryGiB: 0, memoryBudgetBytes: bytes, speed: 1,
    });
    const devices = new Map([
      ['host', new HostDevice('host', 'Host', caps('webgpu', 6 * GiB), null)],
      ['g1', new HostDevice('g1', 'CPU guest', caps('wasm', 16 * GiB), null)],
      ['g2', new HostDevice('g2', 'Ref guest', caps('reference', 16 * GiB), null)],
    ]);
    expect(dealDevices(devices, ENGINES, 'host', GiB).map((d) => d.memoryBudgetBytes)).toEqual([5 * GiB, 4 * GiB, 16 * GiB]);
  });

  test('the card names: threads, SIMD kind, and single-threaded when the page is not isolated', () => {
    expect(wasmLabel({ threads: 4, relaxedSimd: true, isolated: true })).toBe('CPU · 4 threads · relaxed SIMD');
    expect(wasmLabel({ threads: 1, relaxedSimd: false, isolated: true })).toBe('CPU · 1 thread · SIMD');
    expect(wasmLabel({ threads: 4, relaxedSimd: true, isolated: false })).toBe('CPU · 4 threads (page not cross-origin isolated) · relaxed SIMD');
    expect(wasmLabel({ threads: 1, relaxedSimd: false, isolated: false })).toBe('CPU · 1 thread (page not cross-origin isolated) · SIMD');
    expect(wasmLabel({ threads: 2, relaxedSimd: true, isolated: true, q8: true })).toBe('CPU · 2 threads · relaxed SIMD · 8-bit activations');
  });

  test('threads: one unless isolated and able to block; at most 8', () => {
    expect(wasmThreads({ isolated: false, canBlock: true, cores: 8 })).toBe(1);
    expect(wasmThreads({ isolated: true, canBlock: false, cores: 8 })).toBe(1);
    expect(wasmThreads({ isolated: true, canBlock: true, cores: 2 })).toBe(2);
    expect(wasmThreads({ isolated: true, canBlock: true, cores: 32 })).toBe(8);
    expect(wasmThreads({ isolated: true, canBlock: true, cores: 0 })).toBe(1);
  });
});

describe('measureCapabilities with a given probe', () => {
  test('offers the fastest probe\'s engine, name and speed, and caps a WASM offer', async () => {
    const asked: unknown[] = [];
    const probe = async (o: unknown) => { asked.push(o); return [gpuSoft, wasm, ref]; };
    const caps = await measureCapabilities({ engines: ENGINES, probe, memoryBudgetBytes: 6 * GiB });
    expect(asked).toEqual([{}]);
    expect(caps).toMatchObject({ engine: 'wasm', engineLabel: 'CPU · 2 threads · SIMD', speed: 3.1, memoryBudgetBytes: 4 * GiB });
  });

  test('a forced engine probes only itself; a fixed speed wins over the measured one', async () => {
    const asked: unknown[] = [];
    const probe = async (o: unknown) => { asked.push(o); return [ref]; };
    const caps = await measureCapabilities({ engines: ENGINES, engine: 'reference', probe, speed: 2, memoryBudgetBytes: 6 * GiB });
    expect(asked).toEqual([{ only: 'reference' }]);
    expect(caps).toMatchObject({ engine: 'reference', engineLabel: 'reference (JS on the CPU)', speed: 2, memoryBudgetBytes: 6 * GiB });
  });
});

test('the hello carries the engine\'s card name (and an empty one decodes to none)', () => {
  const caps: DeviceCaps = {
    adapter: 'no WebGPU', engine: 'wasm', isFallbackAdapter: false, shaderF16: false, maxStorageBufferBindingSize: 0, maxBufferSize: 0,
    deviceMemoryGiB: 8, memoryBudgetBytes: 4 * GiB, speed: 3, engineLabel: 'CPU · 2 threads · SIMD',
  };
  const f: Frame = { kind: 'hello', protocol: 3, roomId: '0123456789abcdef0123456789abcdef', deviceId: 'abc123xyz', name: 'Old laptop', caps };
  expect(decodeFrame(encodeFrame(f))).toEqual(f);
  const { engineLabel: _, ...bare } = caps;
  const g: Frame = { ...f, caps: bare };
  expect(decodeFrame(encodeFrame(g))).toEqual(g);
});

test('the real probe in Node (no WebGPU here): WebGPU reported missing, the WASM kernels measured and offered', async () => {
  const { probeEngines } = await import('../../../src/room/engine-probe.ts');
  const probes = await probeEngines(ENGINES, { budgetMs: 10 });
  expect(probes.map((p) => p.engine)).toEqual(['webgpu', 'wasm', 'reference']);
  expect(probes[0]!.failed).toBe('this browser has no WebGPU');
  expect(probes[1]!.failed).toBeUndefined();
  expect(probes[1]!.speed).toBeGreaterThan(0);
  expect(probes[2]!.speed).toBeGreaterThan(0);
  expect(chooseEngine(probes, ENGINES).engine).toBe('wasm');
}, 60_000);   // the first use compiles the AssemblyScript kernels into the cache (seconds on a loaded machine)
