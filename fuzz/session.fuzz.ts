// Session fuzz: saved agent sessions as an old build, a crash mid-write or a hand edit may leave them
// (structure-aware mutations of valid sessions, and byte mutations of their JSON text). Each one goes
// through what opening a project does: the store's load, openSession (validate, restore), the Agent
// constructor, the conversation's prompt, a re-render of every tool-result turn and a save. A session
// is either restored and all of that works (whole, or salvaged without its unreadable timeline cards, the
// original set aside), or it is refused with a SessionFormatError and set aside;
// anything else is a crash.
import type { Backend } from '../src/agent/backend.ts';
import type { ChatMessage } from '../src/model/chat-types.ts';
import { Agent } from '../src/agent/loop.ts';
import { MemorySessionStore, openSession, snapshotSession, type SessionData } from '../src/agent/session-store.ts';
import { validateSession } from '../src/agent/session-validate.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';
import { MemoryFiles } from '../src/agent/files/memory.ts';
import type { CallCodec } from '../src/agent/call-codec.ts';
import { seededRandom } from '../src/room/fuzz.ts';
import { mutateJson, type Json } from './json-mutate.ts';
import { crashed, newReport, refusedWith, type FuzzReport } from './report.ts';

/** A model stand-in: a chat template of plain <|im_start|> turns and a tokenizer of character codes. */
function fuzzBackend(): Backend {
  return {
    name: 'fuzz-model', contextSize: 8192, devices: 1,
    encode: (text) => Array.from(text.slice(0, 256), (c) => c.charCodeAt(0) % 4096),
    decode: (ids) => String.fromCharCode(...ids.slice(0, 256)),
    render: (messages: ChatMessage[]) => messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n',
    generate: () => Promise.reject(new Error('the session fuzz never generates')),
  };
}

const WORDS = ['Make a game', 'serve it', 'é€𝄞', '<tool_call>', '\u0000', '', 'x'.repeat(300), 'line\nline'];

/** A valid session with every kind of segment and timeline item, of random size and content. */
function randomSession(rand: () => number): SessionData {
  const word = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  const tokens = () => Array.from({ length: Math.floor(rand() * 12) }, () => Math.floor(rand() * 151_000));
  const segments: SessionData['segments'] = [];
  const timeline: SessionData['timeline'] = [];
  const requests = 1 + Math.floor(rand() * 3);
  for (let r = 0; r < requests; r++) {
    segments.push({ kind: 'user', request: r, text: word(), tokens: tokens(), content: word() });
    timeline.push({ kind: 'request', request: r, text: word() });
    for (let step = 1; step <= 1 + Math.floor(rand() * 3); step++) {
      segments.push({ kind: 'assistant', request: r, step, text: word(), tokens: tokens(), content: word(), final: rand() < 0.3 });
      timeline.push({ kind: 'text', step, text: word() });
      const calls = Array.from({ length: Math.floor(rand() * 3) }, (_, i) => ({
        name: ['read_file', 'write_file', 'serve'][i % 3]!, arguments: { path: word() }, ok: rand() < 0.7, changed: rand() < 0.5, content: word(),
        ...(rand() < 0.3 ? { stubbed: true } : {}), ...(rand() < 0.3 ? { port: 5173 } : {}),
      }));
      if (calls.length) segments.push({ kind: 'results', request: r, step, text: word(), tokens: tokens(), calls });
      timeline.push({ kind: 'call', step, call: step, name: 'serve', arguments: {}, raw: word(), state: 'done', result: word() });
    }
    if (rand() < 0.3) segments.push({ kind: 'note', request: r, text: word(), tokens: tokens(), content: word() });
    if (rand() < 0.2) segments.push({ kind: 'fold', request: r, text: word(), tokens: tokens(), content: word() });
    timeline.push({ kind: 'note', step: 1, note: 'nudge', text: word() });
    timeline.push({ kind: 'summary', request: r, reason: 'done', line: word() });
  }
  return { version: 1, model: rand() < 0.8 ? 'fuzz-model' : 'another-model', requests, segments, timeline, servedPorts: [{ port: 5173, path: '' }], savedAt: 1 };
}

/** Flips, cuts or splices the JSON text (what a crash mid-write leaves). */
function mutateText(text: string, rand: () => number): string {
  const at = Math.floor(rand() * text.length);
  const roll = rand();
  if (roll < 0.4) return text.slice(0, at);
  if (roll < 0.7) return text.slice(0, at) + String.fromCharCode(Math.floor(rand() * 128)) + text.slice(at + 1);
  return text.slice(0, at) + text.slice(Math.floor(rand() * text.length));
}

export async function run(seed: number, count: number): Promise<FuzzReport> {
  const report = newReport('session', seed);
  const t0 = performance.now();
  const rand = seededRandom(seed * 7919 + 1);
  const backend = fuzzBackend();
  const tools = new ToolRegistry(createFileTools(new MemoryFiles()));
  const codec = { parse: () => ({ calls: [], text: '' }) } as unknown as CallCodec; // never asked: nothing is generated
  for (let n = 0; n < count; n++) {
    report.cases++;
    const base = randomSession(rand);
    const mode = rand();
    const store = new MemorySessionStore();
    let text: string;
    if (mode < 0.2) text = JSON.stringify(base);                                            // valid
    else if (mode < 0.85) text = JSON.stringify(mutateJson(base as unknown as Json, rand)); // structure
    else text = mutateText(JSON.stringify(base), rand);                                     // bytes
    store.putRawText('p', text);
    let opened: Awaited<ReturnType<typeof openSession>>;
    try {
      opened = await openSession(store, 'p', backend);
    } catch (e) {
      crashed(report, n, e); // openSession must never throw: a bad session is set aside
      continue;
    }
    if (opened.problem !== undefined && opened.restored) {
      // Salvaged: unreadable timeline cards left out, the conversation restored, the original kept aside and
      // the readable session saved in its place. It must then work like any restored session (below).
      if (!/kept as "p\.unreadable-/.test(opened.problem) || store.raw('p') === undefined) { crashed(report, n, new Error(`salvaged but not kept: ${opened.problem}`)); continue; }
    } else if (opened.problem !== undefined) {
      // Refused: a named SessionFormatError (or the JSON parser's SyntaxError for cut text), and kept aside.
      const name = /^(\w+):/.exec(opened.problem)?.[1] ?? '?';
      if (name !== 'SessionFormatError' && name !== 'SyntaxError') { crashed(report, n, new Error(`refused with ${opened.problem}`)); continue; }
      if (!/kept as "p\.unreadable-/.test(opened.problem) || store.raw('p') !== undefined) { crashed(report, n, new Error(`not set aside: ${opened.problem}`)); continue; }
      refusedWith(report, Object.assign(new Error(opened.problem), { name }));
      continue;
    }
    try {
      const agent = new Agent({ backend, tools, codec, format: 'json', ...(opened.restored ? { restore: opened.restored } : {}) });
      const c = agent.conversation;
      if (c.prompt().length !== c.promptLength()) throw new Error('prompt and promptLength disagree');
      void c.promptText();
      c.segments.forEach((s, i) => { if (s.kind === 'results') c.rerenderResults(i); });
      validateSession('p', JSON.parse(JSON.stringify(snapshotSession(agent, backend.name)))); // what it saves reads back
      report.accepted++;
    } catch (e) {
      crashed(report, n, e);
    }
  }
  report.ms = performance.now() - t0;
  return report;
}
