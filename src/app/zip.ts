// A store-only zip (no compression) of the project's files, for "Download as zip": local file headers,
// the central directory and its end record (PKWARE APPNOTE 4.3), CRC-32 per file, names in UTF-8
// (general-purpose bit 11). Projects are small text files, so no ZIP64: past 0xFFFF files or 4 GiB it
// refuses by name instead of writing a broken archive.

export class ZipError extends Error {
  override name = 'ZipError';
}

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as zip and gzip use it). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface ZipEntry { path: string; data: Uint8Array | string }

/** DOS date and time of `d` (local time, 2-second resolution; 1980 at the earliest). */
function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/** The archive's bytes. Paths are relative with "/" (a leading "/" or "./" is dropped); ".." or an empty name is refused. */
export function zipFiles(entries: readonly ZipEntry[], when = new Date()): Uint8Array {
  if (entries.length > 0xffff) throw new ZipError(`${entries.length} files are more than a zip without ZIP64 holds (65,535)`);
  const enc = new TextEncoder();
  const { time, date } = dosTime(when);
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const path = e.path.replace(/^(\.\/|\/)+/, '');
    if (path === '' || path.split('/').some((s) => s === '..' || s === '')) throw new ZipError(`"${e.path}" is not a file path a zip can hold`);
    const name = enc.encode(path);
    const data = typeof e.data === 'string' ? enc.encode(e.data) : e.data;
    if (offset + 30 + name.length + data.length > 0xffffffff) throw new ZipError('the project is bigger than a zip without ZIP64 holds (4 GiB)');
    const crc = crc32(data);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);     // local file header signature
    lv.setUint16(4, 20, true);             // version needed: 2.0
    lv.setUint16(6, 0x0800, true);         // bit 11: names are UTF-8
    lv.setUint16(8, 0, true);              // method 0: stored
    lv.setUint16(10, time, true);
    lv.setUint16(12, date, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, data.length, true);   // compressed size = size
    lv.setUint32(22, data.length, true);
    lv.setUint16(26, name.length, true);
    lv.setUint16(28, 0, true);             // no extra field
    local.set(name, 30);
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);     // central directory header signature
    cv.setUint16(4, (3 << 8) | 20, true);  // made by: Unix, 2.0 (so the permissions below are read)
    cv.setUint16(6, 20, true);
    cv.setUint16(8, 0x0800, true);
    cv.setUint16(10, 0, true);
    cv.setUint16(12, time, true);
    cv.setUint16(14, date, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, data.length, true);
    cv.setUint32(24, data.length, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(38, (0o100644 << 16) >>> 0, true);   // external attributes: a regular file, rw-r--r--
    cv.setUint32(42, offset, true);        // where its local header starts
    central.set(name, 46);
    locals.push(local, data);
    centrals.push(central);
    offset += local.length + data.length;
  }
  const centralSize = centrals.reduce((a, c) => a + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);       // end of central directory signature
  ev.setUint16(8, entries.length, true);   // entries on this disk
  ev.setUint16(10, entries.length, true);  // entries in all
  ev.setUint32(12, centralSize, true);
  ev.setUint32(16, offset, true);          // central directory offset
  const out = new Uint8Array(offset + centralSize + end.length);
  let at = 0;
  for (const part of [...locals, ...centrals, end]) { out.set(part, at); at += part.length; }
  return out;
}
