// A saved session is data from disk or IndexedDB: an old build, a crash mid-write or a hand edit may have
// left anything there. validateSession checks every field the agent will use (shape, type and range)
// before any of it reaches the Agent, and names the first bad field ("segments[3].tokens is null").
//
// Every list of allowed values comes from the module that writes those values (or, for the union kinds, a
// record typed by the union, so a kind added there does not compile until it is added here): a state the app
// writes and its own reader refuses once cost a user the whole conversation.
import type { Segment } from './conversation.ts';
import { NOTE_KINDS as EVENT_NOTE_KINDS } from './events.ts';
import { SESSION_VERSION, SessionFormatError, type SessionData } from './session-store.ts';
import { END_REASONS as SUMMARY_END_REASONS } from './summary.ts';
import { CALL_STATES as TIMELINE_CALL_STATES, type TimelineItem } from './timeline.ts';

const SEGMENT_KIND_RECORD: Record<Segment['kind'], true> = { user: true, assistant: true, results: true, note: true, fold: true };
const TIMELINE_KIND_RECORD: Record<TimelineItem['kind'], true> = { request: true, text: true, call: true, note: true, summary: true };
const SEGMENT_KINDS: ReadonlySet<string> = new Set(Object.keys(SEGMENT_KIND_RECORD));
const TIMELINE_KINDS: ReadonlySet<string> = new Set(Object.keys(TIMELINE_KIND_RECORD));
const CALL_STATES: ReadonlySet<string> = new Set(TIMELINE_CALL_STATES);
const END_REASONS: ReadonlySet<string> = new Set(SUMMARY_END_REASONS);
const NOTE_KINDS: ReadonlySet<string> = new Set(EVENT_NOTE_KINDS);
/** Token ids are vocabulary indices: no vocabulary has 2^31 entries. */
const MAX_TOKEN_ID = 2 ** 31 - 1;

class Bad extends Error {}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return v.length > 40 ? `the text ${JSON.stringify(v.slice(0, 40))}…` : `the text ${JSON.stringify(v)}`;
  if (typeof v === 'number') return String(v);
  return typeof v;
}

function fail(at: string, v: unknown, want: string): never {
  throw new Bad(`${at} is ${describe(v)}, expected ${want}`);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function record(v: unknown, at: string): Record<string, unknown> {
  if (!isRecord(v)) fail(at, v, 'an object');
  return v;
}
function text(o: Record<string, unknown>, key: string, at: string): void {
  if (typeof o[key] !== 'string') fail(`${at}.${key}`, o[key], 'text');
}
function count(o: Record<string, unknown>, key: string, at: string): void {
  if (!isCount(o[key])) fail(`${at}.${key}`, o[key], 'a whole number ≥ 0');
}
function list(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v)) fail(at, v, 'a list');
  return v;
}

function checkTokens(v: unknown, at: string): void {
  const tokens = list(v, at);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (!(Number.isInteger(t) && (t as number) >= 0 && (t as number) <= MAX_TOKEN_ID)) fail(`${at}[${i}]`, t, 'a token id');
  }
}

function checkSegment(v: unknown, at: string): void {
  const s = record(v, at);
  if (!SEGMENT_KINDS.has(s.kind as string)) fail(`${at}.kind`, s.kind, [...SEGMENT_KINDS].join(', '));
  count(s, 'request', at);
  text(s, 'text', at);
  checkTokens(s.tokens, `${at}.tokens`);
  if (s.kind === 'results') {
    count(s, 'step', at);
    const calls = list(s.calls, `${at}.calls`);
    if (calls.length === 0) fail(`${at}.calls`, calls, 'at least one call (a tool-result turn answers calls)');
    calls.forEach((c, i) => {
      const cat = `${at}.calls[${i}]`;
      const call = record(c, cat);
      text(call, 'name', cat);
      record(call.arguments, `${cat}.arguments`);
      if (typeof call.ok !== 'boolean') fail(`${cat}.ok`, call.ok, 'true or false');
      if (typeof call.changed !== 'boolean') fail(`${cat}.changed`, call.changed, 'true or false');
      text(call, 'content', cat);
      if (call.stubbed !== undefined && typeof call.stubbed !== 'boolean') fail(`${cat}.stubbed`, call.stubbed, 'true or false');
      if (call.port !== undefined && !isPort(call.port)) fail(`${cat}.port`, call.port, 'a port number');
    });
    return;
  }
  text(s, 'content', at);
  if (s.kind === 'assistant') {
    count(s, 'step', at);
    if (typeof s.final !== 'boolean') fail(`${at}.final`, s.final, 'true or false');
  }
}

function checkTimelineItem(v: unknown, at: string): void {
  const t = record(v, at);
  if (!TIMELINE_KINDS.has(t.kind as string)) fail(`${at}.kind`, t.kind, [...TIMELINE_KINDS].join(', '));
  switch (t.kind) {
    case 'request': count(t, 'request', at); text(t, 'text', at); return;
    case 'text': count(t, 'step', at); text(t, 'text', at); return;
    case 'call':
      count(t, 'step', at); count(t, 'call', at); text(t, 'name', at); text(t, 'raw', at);
      record(t.arguments, `${at}.arguments`);
      if (!CALL_STATES.has(t.state as string)) fail(`${at}.state`, t.state, [...CALL_STATES].join(', '));
      if (t.result !== undefined) text(t, 'result', at);
      if (t.repairs !== undefined) list(t.repairs, `${at}.repairs`).forEach((r, i) => { if (typeof r !== 'string') fail(`${at}.repairs[${i}]`, r, 'text'); });
      return;
    case 'note':
      count(t, 'step', at); text(t, 'text', at);
      if (!NOTE_KINDS.has(t.note as string)) fail(`${at}.note`, t.note, [...NOTE_KINDS].join(', '));
      return;
    case 'summary':
      count(t, 'request', at); text(t, 'line', at);
      if (t.tip !== undefined) text(t, 'tip', at);
      if (!END_REASONS.has(t.reason as string)) fail(`${at}.reason`, t.reason, [...END_REASONS].join(', '));
  }
}

const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

/** The session as the agent may use it, or a SessionFormatError naming the project and the first bad field. */
export function validateSession(projectId: string, data: unknown): SessionData {
  try {
    const d = record(data, 'the session');
    if (d.version !== SESSION_VERSION) fail('version', d.version, String(SESSION_VERSION));
    text(d, 'model', 'the session');
    count(d, 'requests', 'the session');
    list(d.segments, 'segments').forEach((s, i) => checkSegment(s, `segments[${i}]`));
    list(d.timeline, 'timeline').forEach((t, i) => checkTimelineItem(t, `timeline[${i}]`));
    if (d.servedPorts !== undefined) {
      list(d.servedPorts, 'servedPorts').forEach((p, i) => {
        const port = record(p, `servedPorts[${i}]`);
        if (!isPort(port.port)) fail(`servedPorts[${i}].port`, port.port, 'a port number');
        text(port, 'path', `servedPorts[${i}]`);
      });
    }
    if (d.savedAt !== undefined && !Number.isFinite(d.savedAt)) fail('savedAt', d.savedAt, 'a time');
    return d as unknown as SessionData;
  } catch (e) {
    if (e instanceof Bad) throw new SessionFormatError(projectId, e.message.replace(/^the session\./, ''));
    throw e;
  }
}

/**
 * A session whose conversation reads but some of whose timeline cards do not (the timeline is what the page
 * shows; the conversation is what the model saw): the session with only the cards that read, and how many
 * were left out. null when the session is unreadable beyond its timeline.
 */
export function salvageSession(projectId: string, data: unknown): { data: SessionData; dropped: number } | null {
  if (!isRecord(data) || !Array.isArray(data.timeline)) return null;
  const kept = data.timeline.filter((t, i) => {
    try { checkTimelineItem(t, `timeline[${i}]`); return true; } catch (e) { if (e instanceof Bad) return false; throw e; }
  });
  try {
    return { data: validateSession(projectId, { ...data, timeline: kept }), dropped: data.timeline.length - kept.length };
  } catch (e) {
    if (e instanceof SessionFormatError) return null;
    throw e;
  }
}
