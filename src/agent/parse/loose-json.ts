// A JSON reader for what small models write when no grammar holds them to JSON. Standard JSON reads
// exactly as JSON.parse reads it, with no mends. Otherwise it reads the near misses a careful reader
// understands the same way, and names each one it needed (the call card shows them):
//   raw line breaks / tabs inside strings      {"content": "<p>
//                                              </p>"}
//   Python-style literals                      {'path': 'a.js', 'append': True, 'x': None}
//   unquoted keys                              {name: "serve", arguments: {}}
//   trailing commas                            {"path": "a.js",}
//   invalid escapes (\' is a quote; \d stays)  {"pattern": "it\'s \d+"}
//   closing braces left out at the very end    {"name": "serve", "arguments": {}
//   unescaped quotes inside a string (only when nothing else reads; a quote then ends a string only
//   where a comma, colon, bracket or the end follows)   {"content": "<div class="app"></div>"}
// Nothing is evaluated: this is a small recursive-descent reader over the text.

export type JsonMend = 'control-chars' | 'python' | 'unquoted-keys' | 'trailing-comma' | 'bad-escape' | 'unclosed' | 'inner-quotes';

/** How each mend reads on a call card ("Mended: …"). */
export const JSON_MEND_LABELS: Record<JsonMend, string> = {
  'control-chars': 'raw line breaks in a string kept as written',
  python: 'Python-style dict read as JSON',
  'unquoted-keys': 'unquoted keys read as names',
  'trailing-comma': 'trailing comma dropped',
  'bad-escape': 'invalid escape read as written',
  unclosed: 'missing closing brace added',
  'inner-quotes': 'unescaped quotes inside a string kept',
};

const MEND_ORDER = Object.keys(JSON_MEND_LABELS) as JsonMend[];

export interface LooseValue {
  value: unknown;
  /** Where the value ends in the text (exclusive). */
  end: number;
  /** The mends it needed, in JSON_MEND_LABELS' order; empty for standard JSON. */
  mends: JsonMend[];
}

export interface LooseOptions {
  /** The text ends inside objects/arrays: close them (an "unclosed" mend). Otherwise that fails. */
  closeAtEnd?: boolean;
}

/** Thrown inside the reader when the text is not readable; never escapes this module. */
class Unreadable extends Error {}

const WS = /[ \t\n\r]/;          // JSON's whitespace, so a clean read is what JSON.parse reads
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const IDENT = /[A-Za-z_$][\w$-]*/y;
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const MAX_DEPTH = 64;

class Reader {
  pos: number;
  readonly mends = new Set<JsonMend>();

  constructor(private readonly text: string, from: number, private readonly innerQuotes: boolean, private readonly closeAtEnd: boolean) {
    this.pos = from;
  }

  mend(m: JsonMend): void {
    this.mends.add(m);
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && WS.test(this.text[this.pos]!)) this.pos++;
  }

  private atEnd(): boolean {
    this.skipSpace();
    return this.pos >= this.text.length;
  }

  value(depth = 0): unknown {
    if (depth > MAX_DEPTH) throw new Unreadable();
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"' || c === "'") return this.string();
    NUMBER.lastIndex = this.pos;
    const n = NUMBER.exec(this.text);
    if (n) {
      this.pos += n[0].length;
      return Number(n[0]);
    }
    IDENT.lastIndex = this.pos;
    const word = IDENT.exec(this.text)?.[0];
    const literals: Record<string, unknown> = { true: true, false: false, null: null, True: true, False: false, None: null };
    if (word !== undefined && word in literals) {
      if (/^[A-Z]/.test(word)) this.mend('python');
      this.pos += word.length;
      return literals[word];
    }
    throw new Unreadable();
  }

  private object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++;
    let afterComma = false;
    for (;;) {
      if (this.atEnd()) return this.closedAtEnd(out);
      if (this.text[this.pos] === '}') {
        if (afterComma) this.mend('trailing-comma');
        this.pos++;
        return out;
      }
      const key = this.key();
      this.skipSpace();
      if (this.text[this.pos] !== ':') throw new Unreadable();
      this.pos++;
      // Own data properties, as JSON.parse makes them ("__proto__" is a key like any other).
      Object.defineProperty(out, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
      if (this.atEnd()) return this.closedAtEnd(out);
      const c = this.text[this.pos];
      if (c === ',') { this.pos++; afterComma = true; continue; }
      if (c === '}') { this.pos++; return out; }
      throw new Unreadable();
    }
  }

  private array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    let afterComma = false;
    for (;;) {
      if (this.atEnd()) return this.closedAtEnd(out);
      if (this.text[this.pos] === ']') {
        if (afterComma) this.mend('trailing-comma');
        this.pos++;
        return out;
      }
      out.push(this.value(depth + 1));
      if (this.atEnd()) return this.closedAtEnd(out);
      const c = this.text[this.pos];
      if (c === ',') { this.pos++; afterComma = true; continue; }
      if (c === ']') { this.pos++; return out; }
      throw new Unreadable();
    }
  }

  private closedAtEnd<T>(value: T): T {
    if (!this.closeAtEnd) throw new Unreadable();
    this.mend('unclosed');
    return value;
  }

  private key(): string {
    const c = this.text[this.pos];
    if (c === '"' || c === "'") return this.string();
    IDENT.lastIndex = this.pos;
    const word = IDENT.exec(this.text)?.[0];
    if (word === undefined) throw new Unreadable();
    this.mend('unquoted-keys');
    this.pos += word.length;
    return word;
  }

  private string(): string {
    const text = this.text;
    const quote = text[this.pos]!;
    if (quote === "'") this.mend('python');
    let out = '';
    for (let i = this.pos + 1; i < text.length; i++) {
      const c = text[i]!;
      if (c === quote) {
        if (this.innerQuotes && !endsString(text, i + 1)) {
          this.mend('inner-quotes');
          out += c;
          continue;
        }
        this.pos = i + 1;
        return out;
      }
      if (c === '\\') {
        const n = text[i + 1];
        if (n === undefined) break;
        i++;
        if (n in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[n];
        else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) {
          out += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16));
          i += 4;
        } else if (n === "'") {
          if (quote === '"') this.mend('bad-escape');
          out += "'";
        } else {
          // Not a JSON escape: keep it as written ("\d+" in a regex stays "\d+").
          this.mend('bad-escape');
          out += '\\' + n;
        }
        continue;
      }
      if (c < ' ') this.mend('control-chars');
      out += c;
    }
    throw new Unreadable();       // the string never ends: nothing to guess
  }
}

/** After a quote: does it end the string? Only where a comma, colon, bracket or the end follows. */
function endsString(text: string, at: number): boolean {
  let i = at;
  while (i < text.length && WS.test(text[i]!)) i++;
  return i >= text.length || ',:}]'.includes(text[i]!);
}

/**
 * Reads one JSON value starting at `from` (leading whitespace skipped), or null when it is not
 * readable even as a near miss. Strict JSON first; unescaped inner quotes only when nothing else reads.
 */
export function readLooseValue(text: string, from: number, opts: LooseOptions = {}): LooseValue | null {
  for (const innerQuotes of [false, true]) {
    const reader = new Reader(text, from, innerQuotes, opts.closeAtEnd ?? false);
    try {
      const value = reader.value();
      if (reader.mends.size === 0) {
        // Standard JSON: take JSON.parse's reading of the same characters, so a clean call is read
        // exactly as before.
        return { value: JSON.parse(text.slice(from, reader.pos)), end: reader.pos, mends: [] };
      }
      return { value, end: reader.pos, mends: MEND_ORDER.filter((m) => reader.mends.has(m)) };
    } catch (e) {
      if (!(e instanceof Unreadable) && !(e instanceof SyntaxError)) throw e;
    }
  }
  return null;
}

/** The whole text as one value (surrounding whitespace allowed), or null. */
export function parseLooseJson(text: string, opts: LooseOptions = {}): { value: unknown; mends: JsonMend[] } | null {
  const read = readLooseValue(text, 0, opts);
  if (!read || text.slice(read.end).trim() !== '') return null;
  return { value: read.value, mends: read.mends };
}
