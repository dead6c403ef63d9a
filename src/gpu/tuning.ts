// How the linear kernels are shaped for an adapter. Each adapter class (CPU rasterizer, integrated,
// discrete, mobile) names a few candidate layouts as starting points; src/gpu/autotune.ts times them on
// the device at start-up (and checks their results) and keeps the fastest, cached per adapter.

export type AdapterClass = 'cpu' | 'integrated' | 'discrete' | 'mobile';

/** The decode matvec's shape (shaders/matvec.wgsl). */
export interface MatvecLayout {
  WG: number;                  // lanes per workgroup (a power of two)
  LANES: number;               // lanes splitting each row (a power of two dividing WG)
  ROWS: number;                // rows per group of LANES lanes (2, 4, 6 or 8: gate|up pairs must fit)
  subgroups: boolean;          // reduce with subgroup operations (needs WG ≤ the smallest subgroup) or workgroup memory
  /**
   * Decode ggml rows with shaders/matvec_superblock.wgsl (a super-block per few lanes) where the block
   * type has it (formats.ts `superblock`: every ggml block type) and K is whole super-blocks;
   * other formats run shaders/matvec.wgsl in the same layout. Absent: false.
   */
  superblock?: boolean;
}

/** The prefill matmul's tile in workgroup memory (shaders/matmul_tiles.wgsl), for GPUs. */
export interface MatmulTilesLayout {
  kind: 'tiles';
  BM: number;                  // tokens per tile (≤ 32, or 64)
  BN: number;                  // weight rows per tile (even)
  TM: number;                  // tokens per thread (≤ 16, divides BM)
  TN: number;                  // rows per thread (≤ 8, divides BN)
}

/** The prefill matmul without workgroup memory (shaders/matmul_rows.wgsl), for SIMD rasterizers. */
export interface MatmulRowsLayout {
  kind: 'rows';
  WG: number;                  // lanes, each with R rows
  R: number;                   // rows per lane (2, 4, 6 or 8)
  TT: number;                  // tokens per workgroup (≤ 16)
  subgroups: boolean;          // the lanes share x by subgroupBroadcast (needs subgroups of ≥ min(WG, 8) lanes, WG ≥ 4) or each loads it
}

export type MatmulLayout = MatmulTilesLayout | MatmulRowsLayout;

/** The head's top-k kernel (shaders/topk_blocks.wgsl): lanes per workgroup (a power of two) and ids per lane (≤ 64). */
export interface TopkLayout { WG: number; ITEMS: number }

/** GPUs: a wide workgroup with few ids per lane (the k rounds of tree reduction are cheap there). */
export const TOPK_GPU_LAYOUT: TopkLayout = { WG: 128, ITEMS: 8 };

/**
 * Weight formats with their own layout choice (the kinds of a GpuLinear chunk's format). The ggml block
 * types share one choice, measured on Q4_K (what most of a Q4_K_M file is).
 */
export type LinearFormat = 'dense' | 'q4' | 'ggml';

export const LINEAR_FORMATS: readonly LinearFormat[] = ['dense', 'ggml', 'q4'];

/**
 * Prefill attention's layout: 'tiles' (shaders/attention_prefill_tiles.wgsl: a workgroup per KV head and
 * block of tokens, K/V tiles shared in workgroup memory; shapes or devices it does not fit fall back) or
 * 'per-head' (shaders/attention.wgsl: a workgroup per query head and token, each reading every key alone).
 */
export type AttentionPrefill = 'tiles' | 'per-head';

export const ATTENTION_PREFILLS: readonly AttentionPrefill[] = ['tiles', 'per-head'];

/** Attention's layout: decode's key splits (flash-decoding, shaders/attention.wgsl) and prefill's kernel. */
export interface AttentionSplit {
  splits: number;              // most splits per head (1: none)
  minKeys: number;             // fewest keys a split takes: short contexts use fewer splits
  /** Decode with one workgroup per query head (attention.wgsl) instead of per KV head: the bench's "before". */
  perHead?: boolean;
  /** Prefill's kernel; absent: 'per-head'. */
  prefill?: AttentionPrefill;
}

export interface Tuning {
  adapterClass: AdapterClass;
  matvec: Record<LinearFormat, MatvecLayout>;
  matmul: Record<LinearFormat, MatmulLayout>;
  attention: AttentionSplit;
  /** The head's candidate selection (shaders/topk_blocks.wgsl); absent: topkLayoutFor(adapterClass). */
  topk?: TopkLayout;
}

/**
 * Attention splits by class (untimed): a GPU needs many workgroups per head at long contexts; a CPU
 * rasterizer has a few threads that the heads alone keep busy, so it splits only very long contexts.
 * A discrete GPU (100+ cores) with few KV heads (Qwen3-30B-A3B: 4) gets up to 64 splits of ≥ 16 keys: a
 * split's serial work is its keys (each value row is a loop step), so short splits shorten a decode
 * step's attention from position 100 on (A3B at 100: 7 splits, 28 workgroups; from 1,024: 256) while the
 * combine's loop over splits stays short. Was 32 splits of ≥ 64 keys (A3B at 100: 8 workgroups).
 */
export function attentionSplitFor(c: AdapterClass): AttentionSplit {
  const prefill = attentionPrefillFor(c);
  return c === 'cpu' ? { splits: 4, minKeys: 512, prefill } : c === 'discrete' ? { splits: 64, minKeys: 16, prefill } : { splits: 16, minKeys: 64, prefill };
}

/**
 * Prefill attention's kernel by class (untimed). GPUs: the tiles, whose workgroups share each K/V load
 * among a block of tokens and the KV head's query heads (the per-head kernel re-reads the whole K/V
 * prefix for every query head and token: 0.04× llama.cpp at a 4,096-token prompt on an H200; the tiles
 * are not yet timed on one). CPU rasterizers keep the per-head kernel, which they have always run.
 */
export function attentionPrefillFor(c: AdapterClass): AttentionPrefill {
  return c === 'cpu' ? 'per-head' : 'tiles';
}

/**
 * The top-k kernel's shape by class (untimed). Each of its k rounds is a tree reduction over the
 * workgroup with a barrier per level; a CPU rasterizer runs a workgroup's lanes as a few SIMD vectors
 * and pays for every barrier, so it gets one subgroup-wide workgroup with 64 ids per lane (measured in
 * Chromium on SwiftShader, tiny model, 151,936 ids: top-20 went from ≈ 275 ms to ≈ 50 ms a token).
 */
export function topkLayoutFor(c: AdapterClass, subgroupMinSize = 0): TopkLayout {
  if (c !== 'cpu') return TOPK_GPU_LAYOUT;
  return { WG: subgroupMinSize >= 4 && subgroupMinSize <= 32 ? subgroupMinSize : 8, ITEMS: 64 };
}

/**
 * Prefill tokens a step by class, before the device's limits (prefillStepFor): a big GPU needs hundreds
 * of tokens a step to fill its cores with the matmul's 64-token tiles (an H200 ran Qwen3-8B's gate_up at
 * 11 TFLOP/s with 256 and far less with 64); small adapters keep today's 64.
 */
export const PREFILL_STEPS: Readonly<Record<AdapterClass, number>> = { cpu: 64, mobile: 128, integrated: 256, discrete: 512 };

/** The device limits the prefill step must respect (a GPUSupportedLimits has them). */
export interface StepLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
}

/**
 * The prefill step (tokens a step: the activations are [T, width] f32 buffers) for an adapter class: the
 * class's PREFILL_STEPS, halved while a step's widest activation row (`widestRow` floats) times T passes
 * the device's binding or buffer limit, but never below 64 (what every engine used before, whatever the
 * limits: the widest row of 64 tokens fits any WebGPU device's 128 MiB binding for the models we run).
 */
export function prefillStepFor(c: AdapterClass, limits: StepLimits, widestRow: number): number {
  const most = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  let T = PREFILL_STEPS[c];
  while (T > 64 && T * widestRow * 4 > most) T /= 2;
  return T;
}

export function matmulThreads(t: MatmulLayout): number {
  return t.kind === 'rows' ? t.WG : (t.BM / t.TM) * (t.BN / t.TN);
}

/**
 * Candidate prefill layouts, best guess first. CPU rasterizers: lanes on weight rows and the tokens
 * shared by a workgroup, without workgroup memory (its loads are per-lane loops on a CPU); where the
 * workgroup can be one subgroup of ≥ 4 lanes, the lanes also share each x value by subgroupBroadcast
 * (a register tile of R·TT ≤ 16 sums fits a SIMD unit's registers: measured on lavapipe at the
 * Qwen3-0.6B shapes, 4 rows × 4 tokens with shared x ran ≈ 2× the fastest layout without); plus one
 * tile for comparison. GPUs: tiles in workgroup memory with 2-D register tiles per thread.
 */
export function matmulCandidates(t: DeviceTraits): MatmulLayout[] {
  const sgKnown = t.subgroupMinSize >= 4 && t.subgroupMinSize <= 64;
  const sg = sgKnown ? t.subgroupMinSize : 8;
  const shared: MatmulLayout[] = t.subgroups && sgKnown
    ? [{ kind: 'rows', WG: sg, R: 4, TT: 4, subgroups: true }, { kind: 'rows', WG: sg, R: 2, TT: 8, subgroups: true }, { kind: 'rows', WG: sg, R: 8, TT: 4, subgroups: true }]
    : [];
  const out: MatmulLayout[] = t.adapterClass === 'cpu'
    ? [
      ...shared,
      { kind: 'rows', WG: sg, R: 8, TT: 8, subgroups: false }, { kind: 'rows', WG: sg, R: 8, TT: 4, subgroups: false },
      { kind: 'rows', WG: sg, R: 4, TT: 16, subgroups: false },
      { kind: 'tiles', BM: 32, BN: 64, TM: 4, TN: 4 },
    ]
    : [
      { kind: 'tiles', BM: 32, BN: 64, TM: 4, TN: 4 },
      // 8 × 8 outputs a thread: four times the fmas per workgroup-memory load of 4 × 4 (32 threads a tile)
      { kind: 'tiles', BM: 32, BN: 64, TM: 8, TN: 8 },
      { kind: 'tiles', BM: 16, BN: 64, TM: 4, TN: 2 }, { kind: 'tiles', BM: 32, BN: 32, TM: 4, TN: 2 },
      // 64 × 64 output tiles (the register-tiled shape of fast GPU matmuls): twice the reuse of each
      // dequantized weight of a 32-token tile; 8 × 4 a thread (128 threads) or 4 × 4 (256)
      { kind: 'tiles', BM: 64, BN: 64, TM: 8, TN: 4 }, { kind: 'tiles', BM: 64, BN: 64, TM: 4, TN: 4 },
    ];
  return out.filter((l) => matmulThreads(l) <= t.maxInvocations);
}

/** What the tuning needs to know about a device. */
export interface DeviceTraits {
  adapterClass: AdapterClass;
  subgroups: boolean;          // the device was created with the 'subgroups' feature
  subgroupMinSize: number;     // 0 when unknown
  maxInvocations: number;
}

type InfoLike = Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean; subgroupMinSize?: number };

/**
 * The adapter class from what the adapter says about itself. Only a starting point: the timed tuning
 * decides among the class's candidates.
 */
export function adapterClassOf(info: InfoLike): AdapterClass {
  const text = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`.toLowerCase();
  if (info.isFallbackAdapter || /llvmpipe|lavapipe|swiftshader|software|warp/.test(text)) return 'cpu';
  if (/\b(arm|mali|qualcomm|adreno|imagination|powervr|samsung)\b/.test(text)) return 'mobile';
  if (/\b(nvidia|amd|ati)\b/.test(text) && !/\b(integrated|apu|vega [0-9] |radeon graphics)\b/.test(text)) return 'discrete';
  return 'integrated';
}

export function deviceTraits(device: GPUDevice): DeviceTraits {
  const info = ((device as unknown as { adapterInfo?: InfoLike }).adapterInfo ?? {}) as InfoLike;
  return {
    adapterClass: adapterClassOf(info),
    subgroups: device.features.has('subgroups'),
    subgroupMinSize: info.subgroupMinSize ?? 0,
    maxInvocations: device.limits.maxComputeInvocationsPerWorkgroup,
  };
}

/**
 * Candidate matvec layouts for a device, best guess first. CPU rasterizers run a subgroup as one SIMD
 * vector: a workgroup of one subgroup, either all lanes splitting a few rows that share each x load
 * (llama.cpp's choice on llvmpipe) or each lane on its own rows so the lanes' x loads are one broadcast.
 * GPUs: a subgroup (or a workgroup-memory tree) per few rows; for the ggml formats also the super-block
 * kernel (shaders/matvec_superblock.wgsl) and for dense weights 8 rows a group, after those, so the
 * untimed default stays the first and the timed choice can only get faster.
 */
export function matvecCandidates(t: DeviceTraits, format?: LinearFormat): MatvecLayout[] {
  const sg = t.subgroups && t.subgroupMinSize >= 4 && t.subgroupMinSize <= 128 ? t.subgroupMinSize : 0;
  const out: MatvecLayout[] = [];
  if (t.adapterClass === 'cpu') {
    const wg = sg || 8;
    out.push({ WG: wg, LANES: wg, ROWS: 8, subgroups: sg > 0 });
    if (sg) out.push({ WG: wg, LANES: 2, ROWS: 8, subgroups: true });
    out.push({ WG: wg, LANES: 1, ROWS: 8, subgroups: false });
  } else {
    if (sg >= 16) for (const ROWS of [2, 4]) out.push({ WG: sg, LANES: sg, ROWS, subgroups: true });
    // Workgroups of several subgroups, a row group in each (its lanes summed by subgroup shuffles): 128
    // threads keep a GPU core's occupancy up where a one-subgroup workgroup (32 on NVIDIA) caps it.
    if (sg >= 16) for (const ROWS of [2, 4]) out.push({ WG: 128, LANES: Math.min(sg, 32), ROWS, subgroups: true });
    const shared: [number, number, number][] = t.adapterClass === 'mobile'
      ? [[64, 16, 2], [64, 64, 2], [128, 32, 2]] : [[64, 64, 2], [128, 32, 2], [256, 64, 2]];
    for (const [WG, LANES, ROWS] of shared) out.push({ WG, LANES, ROWS, subgroups: false });
    // Dense weights (F16/BF16/F32: 16 bytes a lane a row a step): 8 rows a group keep 8 such loads in
    // flight per lane where 2 or 4 rows leave a big GPU's memory waiting (BF16 read 0.25–0.82 of a copy
    // kernel's bandwidth on an H200); workgroups of two groups so that short matrices still fill it.
    if (format === 'dense' && sg >= 16) for (const WG of [64, 128]) out.push({ WG, LANES: Math.min(sg, 32), ROWS: 8, subgroups: true });
    if (format === 'ggml') out.push(...superblockCandidates(sg));
  }
  return dedupe(out).filter((l) => l.WG <= t.maxInvocations);
}

/**
 * GPU layouts of the super-block matvec (4 lanes a Q4_K super-block): row groups of 16 lanes (4
 * super-blocks a step) or a subgroup of 32, summed by subgroup shuffles, in workgroups of 128 (several
 * row groups keep a core's occupancy up), 2 or 4 rows a group; and a workgroup-memory fallback.
 */
function superblockCandidates(sg: number): MatvecLayout[] {
  const out: MatvecLayout[] = [];
  if (sg >= 16) {
    for (const ROWS of [2, 4]) out.push({ WG: 128, LANES: 16, ROWS, subgroups: true, superblock: true });
    if (sg >= 32) out.push({ WG: 128, LANES: 32, ROWS: 4, subgroups: true, superblock: true });
  }
  out.push({ WG: 128, LANES: 16, ROWS: 2, subgroups: false, superblock: true });
  return out;
}

function dedupe(ls: MatvecLayout[]): MatvecLayout[] {
  const seen = new Set<string>();
  return ls.filter((l) => {
    const k = layoutKey(l);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function layoutKey(l: MatvecLayout): string {
  return `${l.superblock ? 'sb-' : ''}wg${l.WG}l${l.LANES}r${l.ROWS}${l.LANES === 1 ? '' : l.subgroups ? 'sg' : 'sh'}`;
}

/** The untimed choice: the first candidate of the device's class, for every format. */
export function defaultTuning(device: GPUDevice): Tuning {
  const t = deviceTraits(device);
  const first = matvecCandidates(t)[0]!;
  const tile = matmulCandidates(t)[0]!;
  return {
    adapterClass: t.adapterClass, matvec: { dense: first, q4: first, ggml: first }, matmul: { dense: tile, q4: tile, ggml: tile },
    attention: attentionSplitFor(t.adapterClass), topk: topkLayoutFor(t.adapterClass, t.subgroupMinSize),
  };
}

export function tileKey(t: MatmulLayout): string {
  return t.kind === 'rows' ? `rows-wg${t.WG}r${t.R}tt${t.TT}${t.subgroups ? 'sg' : ''}` : `tiles-bm${t.BM}bn${t.BN}tm${t.TM}tn${t.TN}`;
}

/** "cpu · matvec q4 wg8l8r8sg, dense …, ggml … · matmul q4 bm16bn64tm16tn1, dense …, ggml …" for stats and benches. */
export function describeTuning(t: Tuning): string {
  return `${t.adapterClass} · matvec q4 ${layoutKey(t.matvec.q4)}, dense ${layoutKey(t.matvec.dense)}, ggml ${layoutKey(t.matvec.ggml)}`
    + ` · matmul q4 ${tileKey(t.matmul.q4)}, dense ${tileKey(t.matmul.dense)}, ggml ${tileKey(t.matmul.ggml)}`
    + ` · attention ${t.attention.splits} splits of ≥ ${t.attention.minKeys} keys, prefill ${t.attention.prefill ?? 'per-head'}`
    + (t.topk ? ` · top-k wg${t.topk.WG}×${t.topk.ITEMS}` : '');
}
