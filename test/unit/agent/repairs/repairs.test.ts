import { describe, expect, it } from 'vitest';
import { repairCall } from '../../../../src/agent/repairs.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../../src/agent/tools/schemas.ts';

const repair = (name: string, args: Record<string, unknown>) => repairCall({ name, arguments: args }, BUILTIN_TOOL_SCHEMAS);

describe('repairs: fill only what the call left out', () => {
  it.each(['file', 'filename', 'file_path'])('path from %s', (alias) => {
    expect(repair('read_file', { [alias]: 'a.js' })).toEqual({ name: 'read_file', arguments: { path: 'a.js' }, repairs: [`path from ${alias}`] });
  });

  it.each(['contents', 'text', 'code'])('content from %s', (alias) => {
    expect(repair('write_file', { path: 'a.js', [alias]: 'x' }).arguments).toEqual({ path: 'a.js', content: 'x' });
  });

  it('"true"/"false" become booleans for boolean parameters only', () => {
    expect(repair('write_file', { path: 'a', content: 'true', append: 'true' }).arguments).toEqual({ path: 'a', content: 'true', append: true });
    expect(repair('write_file', { path: 'a', content: 'x', append: 'False' }).arguments.append).toBe(false);
  });

  it('"./index.html" becomes index.html', () => {
    expect(repair('read_file', { path: './index.html' })).toMatchObject({ arguments: { path: 'index.html' }, repairs: ['path "./index.html" without ./'] });
    expect(repair('read_file', { file: './src/a.js' }).arguments).toEqual({ path: 'src/a.js' });
  });

  it('a content array is joined with newlines', () => {
    expect(repair('write_file', { path: 'a', content: ['<p>', 'hi', '</p>'] }).arguments.content).toBe('<p>\nhi\n</p>');
  });

  it('numbers written as text become numbers for integer parameters', () => {
    expect(repair('read_file', { path: 'a', start_line: '40' }).arguments.start_line).toBe(40);
    expect(repair('read_file', { path: 'a', start_line: 'forty' }).arguments.start_line).toBe('forty');
  });

  it('never overrides a parameter the call gave', () => {
    expect(repair('read_file', { path: 'given.js', file: 'other.js', file_path: 'x.js' })).toEqual({
      name: 'read_file', arguments: { path: 'given.js', file: 'other.js', file_path: 'x.js' }, repairs: [],
    });
    expect(repair('write_file', { path: 'a', content: 'kept', text: 'dropped?', code: 'no' }).arguments).toEqual({ path: 'a', content: 'kept', text: 'dropped?', code: 'no' });
    // run_js has its own `code` parameter: it is not treated as an alias there.
    expect(repair('run_js', { code: 'console.log(1)' })).toEqual({ name: 'run_js', arguments: { code: 'console.log(1)' }, repairs: [] });
  });

  it('leaves calls of unknown tools alone', () => {
    expect(repair('nope', { file: 'a' })).toEqual({ name: 'nope', arguments: { file: 'a' }, repairs: [] });
  });
});

describe('values converted by the declared parameter type', () => {
  const tool = { name: 'plot', description: 'p', parameters: { type: 'object' as const, properties: {
    label: { type: 'string' as const, description: 'l' }, points: { type: 'array' as const, description: 'p' }, style: { type: 'object' as const, description: 's' },
  }, required: [] } };
  it('an object or array parameter written as JSON text becomes that value; a string parameter stays text', () => {
    const r = repairCall({ name: 'plot', arguments: { label: '[1, 2]', points: '[1, 2]', style: '{"color": "red"}' } }, [tool]);
    expect(r.arguments).toEqual({ label: '[1, 2]', points: [1, 2], style: { color: 'red' } });
    expect(r.repairs).toEqual(['points text as an array', 'style text as an object']);
  });
  it('text that is not JSON of the declared kind is left as written', () => {
    const r = repairCall({ name: 'plot', arguments: { points: '{"a": 1}', style: 'red' } }, [tool]);
    expect(r.arguments).toEqual({ points: '{"a": 1}', style: 'red' });
    expect(r.repairs).toEqual([]);
  });
});
