// The tools one agent can call, by name. File tools come from file-tools.ts; the preview registers
// serve / preview_logs / run_js through the same Tool interface; any extra tool may join.
import type { Tool } from '../tool-types.ts';
import type { ToolSchema } from '../../model/chat-types.ts';
import { BUILTIN_TOOL_SCHEMAS } from './schemas.ts';

export class DuplicateToolError extends Error {
  override name = 'DuplicateToolError';
  constructor(readonly tool: string) {
    super(`a tool named ${JSON.stringify(tool)} is already registered`);
  }
}

export class ToolRegistry {
  private tools = new Map<string, Tool>();

  constructor(tools: Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: Tool): this {
    if (this.tools.has(tool.schema.name)) throw new DuplicateToolError(tool.schema.name);
    this.tools.set(tool.schema.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Schemas in a fixed order (built-ins in the spec's order, then extras by name) so the prompt is stable. */
  schemas(): ToolSchema[] {
    const order = BUILTIN_TOOL_SCHEMAS.map((s) => s.name);
    const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    return [...this.tools.values()]
      .map((t) => t.schema)
      .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
