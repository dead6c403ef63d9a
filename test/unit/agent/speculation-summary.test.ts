// Speculation in the request summary: the answers' drafted / accepted / passes are summed per request
// and shown as the summary's tooltip; without speculation there is none.
import { expect, test } from 'vitest';
import { speculationTip } from '../../../src/agent/summary.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';
import { harness } from './harness.ts';

const base = { steps: 2, toolCalls: 1, generated: 40, generateSeconds: 1, devices: 2, seconds: 2 };

test('the tooltip: accepted of drafted, the share, tokens per pass; none when speculation was off', () => {
  expect(speculationTip(base)).toBeNull();
  expect(speculationTip({ ...base, drafted: 64, accepted: 16, passes: 24 })).toBe('speculation: 16 of 64 drafted tokens accepted (25%), 1.67 tokens per pass');
  expect(speculationTip({ ...base, drafted: 0, accepted: 0, passes: 0 })).toBe('speculation on: nothing decoded yet');
});

test('the tooltip names the drafter: prompt lookup, a draft model, both when switched mid-request', () => {
  const s = { ...base, drafted: 64, accepted: 16, passes: 24 };
  expect(speculationTip({ ...s, drafter: 'lookup' })).toBe('speculation (prompt lookup): 16 of 64 drafted tokens accepted (25%), 1.67 tokens per pass');
  expect(speculationTip({ ...s, drafter: 'draft:Qwen3-0.6B' })).toBe('speculation (draft model Qwen3-0.6B): 16 of 64 drafted tokens accepted (25%), 1.67 tokens per pass');
  expect(speculationTip({ ...s, drafter: 'lookup, draft:tiny test model' })).toMatch(/^speculation \(prompt lookup, draft model tiny test model\): 16 of 64/);
  expect(speculationTip({ ...base, drafted: 0, accepted: 0, passes: 0, drafter: 'draft:x' })).toBe('speculation on (draft model x): nothing decoded yet');
});

test('the loop sums each answer\'s speculation stats into the summary event and its timeline item', async () => {
  const h = await harness({ replies: ['<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>', 'Done.'] });
  const generate = h.backend.generate.bind(h.backend);
  let answers = 0;
  h.backend.generate = async (req) => {
    const r = await generate(req);
    answers++;
    return { ...r, stats: { ...r.stats, drafted: 10 * answers, accepted: 3 * answers, passes: 5 * answers, drafter: answers === 1 ? 'lookup' : 'draft:small' } };
  };
  await h.agent.run('Look around');
  const summary = h.events.find((e): e is Extract<AgentEvent, { type: 'summary' }> => e.type === 'summary')!;
  expect(answers).toBe(2);
  expect(summary.stats).toMatchObject({ drafted: 30, accepted: 9, passes: 15, drafter: 'lookup, draft:small' });
  expect(summary.tip).toBe('speculation (prompt lookup, draft model small): 9 of 30 drafted tokens accepted (30%), 1.60 tokens per pass');
  expect(h.agent.timeline.items.at(-1)).toMatchObject({ kind: 'summary', tip: summary.tip });
});
