// "Use a server": the URL starts empty (pooled serves on :8080 itself, so a prefilled llama.cpp default could
// point the agent back at pooled); the examples name llama.cpp on :8080 only when this page is not there.
import { expect, test } from 'vitest';
import { savedServerChoice, serverUrlExamples } from '../../../src/app/server-session.ts';

test('no saved choice: the URL is empty, the tokenizer has its usual default', () => {
  expect(savedServerChoice({ getItem: () => null })).toEqual({ url: '', model: '', tokenizer: 'Qwen/Qwen3-1.7B' });
  expect(savedServerChoice({ getItem: () => '{"url":' })).toEqual({ url: '', model: '', tokenizer: 'Qwen/Qwen3-1.7B' });
});

test("llama.cpp's :8080 is an example only when this page is not served from :8080", () => {
  expect(serverUrlExamples('5173').map((x) => x.url)).toEqual(['http://127.0.0.1:8080', 'http://127.0.0.1:11434', 'http://127.0.0.1:8000']);
  const onPooledPort = serverUrlExamples('8080');
  expect(onPooledPort.map((x) => x.url)).not.toContain('http://127.0.0.1:8080');
  expect(onPooledPort[0]).toEqual({ url: 'http://127.0.0.1:8081', server: 'llama.cpp with --port 8081' });
});
