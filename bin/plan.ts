// npm run plan -- --model SRC --devices 8,4,4,4 [--ctx N] [--kv f16|q8_0] [--ckpt N] [--json]
// The deal a room would make for devices offering those GiB (the first is the host, all equally fast),
// from the model's headers alone: no weight byte is read, so a header-only or sparse GGUF works, and a
// URL costs its header (≈8 MB for a Qwen3 GGUF). The room's own deal code (src/room/plan.ts), so the
// answer is the room's: the largest context up to the model's default (or --ctx, refused when the room
// cannot hold it) and each device's layers and bytes (weights, KV at that context, recurrent state and its
// snapshots, RoPE table, activations, MoE and head scratch, the load's peak) against its offer.
// --json prints exactly one JSON object:
//   {"fits", "ctx", "want", "kv", "note", "devices": [{"layers": [first, last] | null, "bytes", "budgetBytes"}]}
// Exit codes: 0 it fits, 1 it does not (or the model could not be read), 2 bad usage.

import { parseArgs } from 'node:util';
import { defaultContextFor } from '../src/agent/budget.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { KV_TYPES, type KvType } from '../src/room/device-bytes.ts';
import { dealModelOf, planRoom, type RoomPlan } from '../src/room/plan.ts';

const USAGE = `usage: npm run plan -- --model SRC --devices GIB,GIB,... [options]
  --model SRC      a local folder or .gguf file (header-only or sparse is fine), an http(s) URL, a Hugging Face id
  --devices LIST   GiB each device offers, comma-separated; the first is the host (e.g. 8,4,4,4)
  --ctx N          the context wanted (default: the model's, 32,768 for MoE); refused if the room cannot hold it
  --kv TYPE        f16 (default) or q8_0: how the KV cache is stored
  --ckpt N         answer checkpoints kept (default 4): a hybrid's recurrent state is kept once more per checkpoint
  --json           print one JSON object and nothing else`;

const GiB = 2 ** 30;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse(): { model: string; budgets: number[]; ctx?: number; kv: KvType; ckpt?: number; json: boolean } {
  let values;
  try {
    ({ values } = parseArgs({ options: { model: { type: 'string' }, devices: { type: 'string' }, ctx: { type: 'string' }, kv: { type: 'string' }, ckpt: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } } }));
  } catch (e) { fail((e as Error).message); }
  if (values.help) { process.stdout.write(`${USAGE}\n`); process.exit(0); }
  if (!values.model) fail('--model is required');
  if (!values.devices) fail('--devices is required');
  const budgets = values.devices.split(',').map((t) => {
    const n = Number(t.trim());
    if (!/^\d*\.?\d+$/.test(t.trim()) || !(n > 0 && n <= 1024)) fail(`--devices: "${t}" is not a number of GiB in (0, 1024]`);
    return Math.round(n * GiB);
  });
  const whole = (name: string, v: string | undefined, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) fail(`--${name} must be a whole number in [${min}, ${max}], got "${v}"`);
    return Number(v);
  };
  const kv = (values.kv ?? 'f16') as KvType;
  if (!KV_TYPES.includes(kv)) fail(`--kv must be ${KV_TYPES.join(' or ')}, got "${values.kv}"`);
  const ctx = whole('ctx', values.ctx, 256, 262_144);
  const ckpt = whole('ckpt', values.ckpt, 0, 64);
  return { model: values.model, budgets, kv, json: values.json ?? false, ...(ctx !== undefined ? { ctx } : {}), ...(ckpt !== undefined ? { ckpt } : {}) };
}

const gib = (b: number): string => (b / GiB).toFixed(2);

function table(p: RoomPlan): string {
  const rows = p.devices.map((d) => {
    const layers = d.range[1] > d.range[0] ? `${d.range[0]}–${d.range[1] - 1} (${d.range[1] - d.range[0]})` : '—';
    return `${d.name.padEnd(9)} ${layers.padEnd(14)} ${gib(d.bytes).padStart(7)} ${gib(d.budgetBytes).padStart(7)}`;
  });
  const head = p.fits ? `fits: ${p.note} (KV ${p.kv})` : `does not fit: ${p.note}`;
  return [head, `${'device'.padEnd(9)} ${'layers'.padEnd(14)} ${'GiB'.padStart(7)} ${'offers'.padStart(7)}`, ...rows].join('\n');
}

async function main(): Promise<void> {
  const a = parse();
  const source = await resolveModelSource(a.model);
  const model = await dealModelOf(source);
  const plan = planRoom(model, a.budgets, { want: a.ctx ?? defaultContextFor(model.config), exact: a.ctx !== undefined, kv: a.kv, ...(a.ckpt !== undefined ? { ckpt: a.ckpt } : {}) });
  if (a.json) {
    const devices = plan.devices.map((d) => ({ layers: d.range[1] > d.range[0] ? [d.range[0], d.range[1] - 1] : null, bytes: d.bytes, budgetBytes: d.budgetBytes }));
    process.stdout.write(`${JSON.stringify({ fits: plan.fits, ctx: plan.ctx, want: plan.want, kv: plan.kv, note: plan.note, devices })}\n`);
  } else {
    process.stdout.write(`${table(plan)}\n`);
  }
  process.exitCode = plan.fits ? 0 : 1;
}

main().catch((e: Error) => { process.stderr.write(`${e.name}: ${e.message}\n`); process.exit(1); });
