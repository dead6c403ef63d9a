// ModelSource over HTTP(S): a Hugging Face repo (resolve URLs) or any base URL with the same layout.
// Ranged reads send `Range: bytes=a-(b-1)`; a server that ignores Range (answers 200) makes us read
// the whole file once, keep it, and slice it for every later range of that file. Where the files can be
// listed (the hub's API), exists() answers from that list, so no probe ever asks for a missing file
// (a browser logs every 404 as a console error, even one we expect).
// The server may lie: a 206 must carry a Content-Range that starts where we asked, and we read at most
// the bytes asked for (a padded reply is cut off); a whole-file read stops at the size the caller
// expects (maxBytes), the identity Content-Length, or maxFileBytes, and throws past it.
// Every range read has a deadline from its bytes at a minimum rate (read-deadline.ts), follow-up
// requests and a stalled body included, so a server that drips bytes cannot hold a load for ever.

import { FileTooLongError, ModelSourceError, TruncatedFileError } from '../errors.ts';
import type { ModelSource, ReadFileOptions } from '../types.ts';
import { checkRangeArgs, normalisePath, requireWithin } from './common.ts';
import { ReadDeadline, serverOf, type ReadDeadlineOptions } from './read-deadline.ts';

export interface HttpSourceOptions {
  label?: string;
  /** Replaceable for tests or for adding headers (auth); defaults to globalThis.fetch. */
  fetch?: typeof fetch;
  /** Build the URL of a file; defaults to base + "/" + path. */
  urlFor?: (path: string) => string;
  /** Retries after a network error, 5xx or 429 (default 2), waiting retryDelayMs × attempt (default 500). */
  retries?: number;
  retryDelayMs?: number;
  /** The model is this one GGUF file under the base URL (see ModelSource.modelFile). */
  modelFile?: string;
  /**
   * Every file's path (the hub's file list), asked once on the first exists() and retried like a read;
   * when it still fails, exists() asks per file.
   */
  listFiles?: () => Promise<Iterable<string>>;
  /** The most a whole-file read takes when the caller expects no size and the server states none (default 8 GiB). */
  maxFileBytes?: number;
  /** A range read must finish within this grace + its bytes at this rate (read-deadline.ts: 30 s + 256 KiB/s). */
  readDeadline?: ReadDeadlineOptions;
}

const DEFAULT_MAX_FILE_BYTES = 8 * 2 ** 30;

export class HttpModelSource implements ModelSource {
  readonly label: string;
  readonly baseUrl: string;
  readonly modelFile?: string;
  private readonly fetchImpl: typeof fetch;
  private readonly urlForPath: (path: string) => string;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly maxFileBytes: number;
  private readonly readDeadline: ReadDeadlineOptions;
  /** Files whose server ignored Range: their whole bytes, fetched once. */
  private readonly wholeFiles = new Map<string, Promise<Uint8Array>>();
  private readonly listFiles: (() => Promise<Iterable<string>>) | undefined;
  private listing: Promise<ReadonlySet<string> | null> | undefined;
  /** exists() answers already had (a missing file is asked for once, not once per reader). */
  private readonly existence = new Map<string, boolean>();

  constructor(baseUrl: string, opts: HttpSourceOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.label = opts.label ?? this.baseUrl;
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.urlForPath = opts.urlFor ?? ((path) => `${this.baseUrl}/${path.split('/').map(encodeURIComponent).join('/')}`);
    this.retries = Math.max(0, opts.retries ?? 2);
    this.retryDelayMs = Math.max(0, opts.retryDelayMs ?? 500);
    this.maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.readDeadline = opts.readDeadline ?? {};
    if (opts.modelFile !== undefined) this.modelFile = opts.modelFile;
    this.listFiles = opts.listFiles;
  }

  /** The file's length: Content-Length of a HEAD, else the total of a one-byte Range answer. */
  async size(path: string): Promise<number> {
    const whole = this.wholeFiles.get(path);
    if (whole) return (await whole).byteLength;
    const url = this.urlFor(path);
    const head = await this.request(path, url, undefined, 'HEAD');
    const length = Number(head.headers.get('content-length'));
    if (head.ok && head.headers.get('content-length') !== null && Number.isSafeInteger(length)) return length;
    if (head.status === 404 || head.status === 410) throw this.statusError(path, url, head);
    const res = await this.request(path, url, { Range: 'bytes=0-0' });
    void res.body?.cancel().catch(() => undefined);
    const total = contentRangeTotal(res.headers.get('content-range'));
    if (res.status === 206 && total !== null) return total;
    if (res.status === 416 && total !== null) return total;
    const full = Number(res.headers.get('content-length'));
    if (res.status === 200 && Number.isSafeInteger(full)) return full;
    throw this.statusError(path, url, res);
  }

  urlFor(path: string): string {
    return this.urlForPath(normalisePath(path));
  }

  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const max = Math.min(opts.maxBytes ?? Infinity, this.maxFileBytes);
    const cached = this.wholeFiles.get(path);
    if (cached) {
      const bytes = await cached;
      if (bytes.byteLength > max) throw tooLong(path, this.urlFor(path), max);
      return bytes;
    }
    const url = this.urlFor(path);
    // Its headers within the grace period; its body within grace + its stated length (else the most it may be) at the minimum rate.
    const res = await new ReadDeadline(serverOf(url), path, url, 0, this.readDeadline).race(this.request(path, url), () => 0);
    if (res.status !== 200) throw this.statusError(path, url, res);
    const deadline = new ReadDeadline(serverOf(url), path, url, Math.min(identityLength(res) ?? max, max), this.readDeadline);
    return this.body(path, url, res, { max, deadline });
  }

  async readRange(path: string, start: number, end: number, onBytes?: (n: number) => void): Promise<Uint8Array> {
    checkRangeArgs(this.label, path, start, end);
    const whole = this.wholeFiles.get(path);
    if (whole) return sliceWithin(path, await whole, start, end);
    if (start === end) return new Uint8Array(0);
    const url = this.urlFor(path);
    const deadline = new ReadDeadline(serverOf(url), path, url, end - start, this.readDeadline);
    const res = await deadline.race(this.request(path, url, { Range: `bytes=${start}-${end - 1}` }), () => 0);
    if (res.status === 206) return this.rangeBody(path, url, res, start, end, deadline, onBytes);
    if (res.status === 200) {
      // The server ignores Range: keep the whole file so every later range is a slice of it.
      const pending = this.body(path, url, res, { max: this.maxFileBytes });
      this.wholeFiles.set(path, pending);
      pending.catch(() => this.wholeFiles.delete(path));
      return sliceWithin(path, await pending, start, end);
    }
    if (res.status === 416) {
      const total = contentRangeTotal(res.headers.get('content-range'));
      throw new TruncatedFileError(
        `needs bytes [${start}, ${end}) but the file is ${total === null ? 'shorter' : `only ${total} bytes long`}`,
        { file: path, ...(total !== null ? { fileSize: total } : {}) });
    }
    throw this.statusError(path, url, res);
  }

  /**
   * The bytes [start, end) from a 206 answer, and from follow-up requests when it brings fewer: a server
   * may send part of a range (HTTP lets it; CDNs cap range sizes) and a connection may end early, and
   * neither means the file is short. Only a Content-Range total below `end` (or a 416) says that.
   * A follow-up that brings nothing counts as a try, so a server that keeps sending nothing fails after
   * `retries` more tries instead of looping.
   */
  private async rangeBody(path: string, url: string, first: Response, start: number, end: number, deadline: ReadDeadline, onBytes?: (n: number) => void): Promise<Uint8Array> {
    const out = new Uint8Array(end - start);
    let got = 0, empty = 0, res = first;
    for (;;) {
      const at = start + got;
      // Only a Content-Range that starts where we asked says what the bytes are; then at most end − at are read.
      const range = parseContentRange(res.headers.get('content-range'));
      if (range === null) {
        void res.body?.cancel().catch(() => undefined);
        throw new ModelSourceError(`the server answered 206 without a Content-Range (or with one that does not parse: ${JSON.stringify(res.headers.get('content-range'))}), so its bytes cannot be checked`, { file: path, url, status: 206 });
      }
      if (range.start !== at) {
        void res.body?.cancel().catch(() => undefined);
        throw new ModelSourceError(`asked for bytes from ${at}, server sent from ${range.start}`, { file: path, url, status: 206 });
      }
      if (range.total !== null && range.total < end) {
        void res.body?.cancel().catch(() => undefined);
        throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${range.total} bytes long`, { file: path, fileSize: range.total });
      }
      const bytes = await this.body(path, url, res, { take: end - at, deadline, before: got, ...(onBytes ? { onBytes } : {}) });
      out.set(bytes, got);
      got += bytes.byteLength;
      if (got === end - start) return out;
      deadline.check(got); // a server sending a byte per answer gets no more requests past the deadline
      empty = bytes.byteLength === 0 ? empty + 1 : 0;
      if (empty > this.retries) {
        throw new ModelSourceError(`the server sent ${got} of the ${end - start} bytes asked for in [${start}, ${end}), then ${empty} answers with none of the rest`, { file: path, url, status: 206 });
      }
      res = await deadline.race(this.request(path, url, { Range: `bytes=${start + got}-${end - 1}` }), () => got);
      if (res.status === 416) {
        const total = contentRangeTotal(res.headers.get('content-range'));
        throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is ${total === null ? 'shorter' : `only ${total} bytes long`}`, { file: path, ...(total !== null ? { fileSize: total } : {}) });
      }
      // A 200 now would resend the whole file from byte 0, not the rest of this range.
      if (res.status !== 206) throw this.statusError(path, url, res);
    }
  }

  async exists(path: string): Promise<boolean> {
    if (this.wholeFiles.has(path)) return true;
    const listed = await this.listedFiles();
    if (listed) return listed.has(normalisePath(path));
    const known = this.existence.get(path);
    if (known !== undefined) return known;
    const url = this.urlFor(path);
    let res = await this.request(path, url, undefined, 'HEAD');
    if (res.status === 405 || res.status === 501) {
      res = await this.request(path, url, { Range: 'bytes=0-0' });
      await res.body?.cancel();
    }
    if (res.ok || res.status === 404 || res.status === 410) {
      this.existence.set(path, res.ok);
      return res.ok;
    }
    throw this.statusError(path, url, res);
  }

  /** The file list, once (null when there is none or it could not be had). */
  private listedFiles(): Promise<ReadonlySet<string> | null> {
    this.listing ??= this.readListing();
    return this.listing;
  }

  private async readListing(): Promise<ReadonlySet<string> | null> {
    const list = this.listFiles;
    if (!list) return null;
    for (let attempt = 0; ; attempt++) {
      try {
        return new Set([...(await list())].map(normalisePath));
      } catch (e) {
        // A network error or a server's hiccup is tried again, as reads are; an answer (404, 401) is final.
        const status = (e as { status?: unknown }).status;
        const transient = typeof status !== 'number' || status >= 500 || status === 429;
        if (!transient || attempt >= this.retries) return null;
        await new Promise((ok) => setTimeout(ok, this.retryDelayMs * (attempt + 1)));
      }
    }
  }


  /** One request, retried on transient failures (network error, 5xx, 429); other statuses return as they are. */
  private async request(path: string, url: string, headers?: Record<string, string>, method = 'GET'): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await this.fetchImpl(url, { method, ...(headers ? { headers } : {}) });
      } catch (e) {
        failure = e;
      }
      const transient = res === undefined || res.status >= 500 || res.status === 429;
      if (!transient || attempt >= this.retries) {
        if (res) return res;
        throw new ModelSourceError(`${method} ${url} failed: ${(failure as Error).message}`, { file: path, url, cause: failure });
      }
      void res?.body?.cancel().catch(() => undefined);
      await new Promise((ok) => setTimeout(ok, this.retryDelayMs * (attempt + 1)));
    }
  }

  /**
   * The response body, read as a stream. take: stop after this many bytes (the rest is never read);
   * max: throw once more than this arrives (and stop reading). The identity Content-Length, when
   * present, is both a promise we hold the server to and a tighter max.
   */
  private async body(path: string, url: string, res: Response, limit: { take?: number; max?: number; deadline?: ReadDeadline; before?: number; onBytes?: (n: number) => void }): Promise<Uint8Array> {
    const declared = identityLength(res);
    const max = Math.min(limit.max ?? Infinity, limit.take ?? Infinity);
    if (limit.take === undefined && declared !== null && declared > max) {
      void res.body?.cancel().catch(() => undefined);
      throw tooLong(path, url, max, declared);
    }
    if (!res.body) return new Uint8Array(0);
    const reader = res.body.getReader();
    const cap = limit.take ?? max;
    let out = new Uint8Array(Math.min(declared ?? 64 * 1024, cap === Infinity ? 64 * 1024 * 1024 : cap));
    let got = 0;
    try {
      for (;;) {
        const { done, value } = await (limit.deadline ? limit.deadline.race(reader.read(), () => (limit.before ?? 0) + got) : reader.read());
        if (done) break;
        if (limit.take === undefined && got + value.byteLength > max) throw tooLong(path, url, max);
        const keep = Math.min(value.byteLength, cap - got);
        if (got + keep > out.byteLength) {
          const grown = new Uint8Array(Math.min(cap, Math.max(out.byteLength * 2, got + keep)));
          grown.set(out.subarray(0, got));
          out = grown;
        }
        out.set(keep === value.byteLength ? value : value.subarray(0, keep), got);
        got += keep;
        if (keep > 0) limit.onBytes?.(keep);
        if (limit.take !== undefined && got >= limit.take) {
          // What we asked for. An honest server ends the body here; one that pads it is cut off (the
          // wait is bounded, so a server that stalls after the bytes cannot hold the read either).
          let timer: ReturnType<typeof setTimeout> | undefined;
          const next = await Promise.race([reader.read(), new Promise<null>((r) => { timer = setTimeout(() => r(null), 1000); })]);
          clearTimeout(timer);
          if (next && !next.done && next.value.byteLength === 0) continue;
          break;
        }
      }
    } catch (e) {
      if (e instanceof FileTooLongError || e instanceof ModelSourceError) throw e;
      throw new ModelSourceError(`reading ${url} failed: ${(e as Error).message}`, { file: path, url, status: res.status, cause: e });
    } finally {
      void reader.cancel().catch(() => undefined);
    }
    return got === out.byteLength ? out : out.slice(0, got);
  }

  private statusError(path: string, url: string, res: Response): ModelSourceError {
    void res.body?.cancel().catch(() => undefined);
    const what = res.status === 404 ? 'not found' : res.status === 401 || res.status === 403 ? 'access denied (gated or private?)' : 'request failed';
    return new ModelSourceError(`${what}: HTTP ${res.status} ${res.statusText} for ${url}`, { file: path, url, status: res.status });
  }
}

function sliceWithin(path: string, bytes: Uint8Array, start: number, end: number): Uint8Array {
  requireWithin(path, bytes.byteLength, start, end);
  return bytes.subarray(start, end);
}

/** "bytes 10-19/100" → {start 10, last 19, total 100}; "bytes 10-19/*" → total null; anything else → null. */
function parseContentRange(header: string | null): { start: number; last: number; total: number | null } | null {
  const m = header?.match(/^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i);
  if (!m) return null;
  const start = Number(m[1]), last = Number(m[2]), total = m[3] === '*' ? null : Number(m[3]);
  if (last < start || (total !== null && last >= total)) return null;
  return { start, last, total };
}

/** "bytes 10-19/100" or "bytes * /100" → 100 */
function contentRangeTotal(header: string | null): number | null {
  const m = header?.match(/\/(\d+)\s*$/);
  return m ? Number(m[1]) : null;
}

/** Content-Length when it counts the bytes we will read (no Content-Encoding), else null. */
function identityLength(res: Response): number | null {
  const encoding = res.headers.get('content-encoding');
  if (encoding && encoding.toLowerCase() !== 'identity') return null;
  const length = res.headers.get('content-length');
  return length !== null && /^\d+$/.test(length.trim()) ? Number(length) : null;
}

function tooLong(path: string, url: string, max: number, declared?: number): FileTooLongError {
  const what = declared === undefined ? `sent more than ${max} bytes` : `declares ${declared} bytes, more than ${max}`;
  return new FileTooLongError(`${url} ${what}, the most this file may be`, { file: path, url }, max);
}
