// The search job as plain JavaScript source, so it can run in a killable thread in both places:
// a browser Worker (from a Blob URL) and a Node worker_threads Worker (eval: true). It is a string on
// purpose: bundlers and test transforms must not rewrite it (no imports, no helpers injected).
//
// Job in:  { pattern: string, flags: string, files: [{ path, text }], maxHits: number, lineChars: number }
// Reply:   { hits: [{ path, line, text }], total: number } or { error: string }
export const REGEX_WORKER_SOURCE = String.raw`
function runSearch(job) {
  let re;
  try { re = new RegExp(job.pattern, job.flags); } catch (e) { return { error: String(e && e.message || e) }; }
  const hits = [];
  let total = 0;
  for (const file of job.files) {
    const lines = file.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      re.lastIndex = 0;
      if (!re.test(lines[i])) continue;
      total++;
      if (hits.length < job.maxHits) {
        let text = lines[i].replace(/\r$/, '').trim();
        if (text.length > job.lineChars) text = text.slice(0, job.lineChars) + '…';
        hits.push({ path: file.path, line: i + 1, text });
      }
    }
  }
  return { hits, total };
}
if (typeof require === 'function') {
  const { parentPort } = require('node:worker_threads');
  parentPort.on('message', (job) => parentPort.postMessage(runSearch(job)));
} else {
  self.onmessage = (event) => self.postMessage(runSearch(event.data));
}
`;
