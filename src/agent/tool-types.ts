// The contract every agent tool implements: file tools (src/agent/tools) and preview tools (src/preview).

/** JSON-schema subset used in chat templates' tools list. */
export interface ToolParameterSchema {
  type: 'string' | 'boolean' | 'integer' | 'number';
  description: string;
}

export interface ToolSchema {
  name: string;
  description: string;
  parameters: {
    type: 'object';
    properties: Record<string, ToolParameterSchema>;
    required: string[];
  };
}

/** Typed outcome of one call: the text goes back to the model as the tool result. */
export type ToolOutcome =
  | { ok: true; text: string; changed?: boolean }      // changed: the project's files changed
  | { ok: false; error: string; text?: string };

export interface ToolContext {
  signal?: AbortSignal;
}

export interface Tool {
  schema: ToolSchema;
  /** Read-only tools may be repeated; writes are never run twice with the same arguments. */
  readOnly: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}
