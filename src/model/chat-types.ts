// What a chat template renders (chat-template.ts): the conversation's messages and the tools list. Owned
// here, by the model layer; the agent builds these (src/agent/turns.ts, tools/schemas.ts).

/** A chat message as the chat template takes it (arguments as objects, never JSON strings). */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: { name: string; arguments: Record<string, unknown> }[] }
  | { role: 'tool'; content: string; name?: string };

/** JSON-schema subset used in chat templates' tools list. */
export interface ToolParameterSchema {
  type: 'string' | 'boolean' | 'integer' | 'number' | 'object' | 'array';
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
