// A device that leaves mid-run, at the agent's level: a room double over the replay model's Generator
// that ends the answer the way the room's host does when a device holding layers leaves (stopped, with a
// note naming it). The timeline names the device and says to re-deal; the summary ends with `stopped`.
import { readFileSync } from 'node:fs';
import { expect, test, vi } from 'vitest';
import { Agent } from '../../../src/agent/loop.ts';
import { createCallCodec } from '../../../src/agent/call-codec.ts';
import { EngineBackend } from '../../../src/agent/engine-backend.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { ReplayEngine } from '../../../src/agent/replay/replay-engine.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { TokenGenerator } from '../../../src/model/generate-types.ts';
import { Generator } from '../../../src/model/generator.ts';
import { call, notes } from './harness.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';

vi.setConfig({ testTimeout: 120_000 });

/** The room's host, as the agent sees it: answers through the Generator until a device "leaves" at token `dropAt`. */
function roomThatLosesADevice(generator: Generator, dropAt: number, device: string): TokenGenerator & { dropped: boolean } {
  const room = {
    dropped: false,
    async generate(prompt: readonly number[], opts: Parameters<Generator['generate']>[1]) {
      const gone = new AbortController();
      opts.signal?.addEventListener('abort', () => gone.abort(), { once: true });
      const r = await generator.generate(prompt, {
        ...opts, signal: gone.signal,
        onToken: (id, ids) => {
          opts.onToken?.(id, ids);
          if (!room.dropped && ids.length === dropAt) { room.dropped = true; gone.abort(); }
        },
      });
      return gone.signal.aborted && room.dropped && !opts.signal?.aborted
        ? { ...r, finish: 'stopped' as const, note: `device "${device}" left the room (tab closed)` }
        : r;
    },
  };
  return room;
}

test('a device that leaves mid-run is named in the timeline, the stop note says to re-deal, the summary ends stopped', async () => {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
  const engine = new ReplayEngine(tokenizer, [`Writing the game now. ${call('write_file', { path: 'game.js', content: 'let score = 0;\n'.repeat(20) })}`], 8192);
  const room = roomThatLosesADevice(new Generator(engine, { ctx: 8192 }), 12, 'Phone');
  const backend = new EngineBackend({ generator: room, tokenizer, template, contextSize: 8192, devices: 2, name: 'room' });
  const files = new MemoryFiles({});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const agent = new Agent({ backend, tools, files, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  const events: AgentEvent[] = [];
  agent.subscribe((e) => events.push(e));
  const out = await agent.run('Make a game');
  expect(room.dropped).toBe(true);
  expect(out.reason).toBe('stopped');
  expect(out.note).toBe('stopped: device "Phone" left the room (tab closed) mid-run. The partial answer is kept and none of its calls ran. ' +
    'Re-deal the layers over the devices still in the room, then send the request again');
  expect(notes(events).at(-1)).toBe(`end: ${out.note}`);
  expect(out.summary).toMatch(/^1 step · 0 tool calls · 12 tok · [\d.]+ tok\/s · 2 devices · [\d.]+ s · stopped$/);
  expect(await files.allFiles()).toEqual([]);
  expect(agent.timeline.items.at(-1)).toMatchObject({ kind: 'summary', reason: 'stopped' });
});
