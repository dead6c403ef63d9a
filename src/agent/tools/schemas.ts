// The schemas of the agent's 8 built-in tools, as the chat template lists them to the model.
// Descriptions are short on purpose: the tools list is part of the system prompt, which every device
// in the room computes before the first answer. Limits are the seed's (002 "Tools").
import type { ToolParameterSchema, ToolSchema } from '../../model/chat-types.ts';

function tool(name: string, description: string, properties: Record<string, ToolParameterSchema>, required: string[]): ToolSchema {
  return { name, description, parameters: { type: 'object', properties, required } };
}

const str = (description: string): ToolParameterSchema => ({ type: 'string', description });

export const LIST_DIR = tool('list_dir', 'List a folder (default: project root). Up to 200 entries.',
  { path: str('Folder path') }, []);

export const READ_FILE = tool('read_file', 'Read a file with line numbers, up to 200 lines or 5900 characters per call; the footer says where to read on.',
  {
    path: str('File path'), start_line: { type: 'integer', description: 'First line to read (default 1)' },
    start_char: { type: 'integer', description: 'Character of start_line to start at, for a line too long for one read (default 1)' },
  }, ['path']);

export const SEARCH = tool('search', 'Regex search over the project or under a path. Returns path:line: text, up to 30 hits.',
  { pattern: str('Regular expression'), path: str('Folder or file to search') }, ['pattern']);

export const WRITE_FILE = tool('write_file', 'Create or replace a file. Keep each call under 100 lines; write longer files in parts with append: true.',
  { path: str('File path'), content: str('Full file content'), append: { type: 'boolean', description: 'Add to the end instead of replacing' } },
  ['path', 'content']);

export const EDIT_FILE = tool('edit_file', 'Replace old with new in a file. old must match the file exactly, once.',
  { path: str('File path'), old: str('Exact text to replace'), new: str('Replacement text') }, ['path', 'old', 'new']);

export const SERVE = tool('serve', 'Serve a folder on the preview port 5173 and return the page\'s first errors. localStorage works there (kept across reloads); IndexedDB and cookies do not.',
  { path: str('Folder to serve (default: project root)') }, []);

export const PREVIEW_LOGS = tool('preview_logs', 'Console output of the served page since a cursor, newest last.',
  { cursor: { type: 'integer', description: 'Cursor from the previous call' } }, []);

export const RUN_JS = tool('run_js', 'Run a JS module in the sandbox next to the page and return what it printed (3 s).',
  { code: str('JavaScript module source'), port: { type: 'integer', description: 'Preview port of the page' } }, ['code']);

/** All built-in tools, in the order the system prompt lists them. */
export const BUILTIN_TOOL_SCHEMAS: readonly ToolSchema[] = [
  LIST_DIR, READ_FILE, SEARCH, WRITE_FILE, EDIT_FILE, SERVE, PREVIEW_LOGS, RUN_JS,
];

export function toolSchemaByName(name: string, tools: readonly ToolSchema[] = BUILTIN_TOOL_SCHEMAS): ToolSchema | undefined {
  return tools.find((t) => t.name === name);
}
