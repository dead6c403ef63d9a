// Repairs for small models (docs/agent.md, Repairs and guards): before a call runs, fill in what its
// intent makes clear. A repair only fills a parameter the call left out, or converts a value to the type
// the schema declares; it never replaces a value the call gave. The parser's mends (how the call's text
// was read) come first in the list, so one list says everything mended between the model's text and
// the call that runs.
import type { ParsedCall } from './parse/types.ts';
import type { ToolSchema } from '../model/chat-types.ts';

export interface RepairedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** One line per repair made, e.g. "path from file_path" (empty when none). */
  repairs: string[];
}

export type RepairableCall = Pick<ParsedCall, 'name' | 'arguments'> & Partial<Pick<ParsedCall, 'mends'>>;

const ALIASES: Record<string, string[]> = {
  path: ['file', 'filename', 'file_path'],
  content: ['contents', 'text', 'code'],
};

export function repairCall(call: RepairableCall, tools: readonly ToolSchema[]): RepairedCall {
  const args: Record<string, unknown> = { ...call.arguments };
  const repairs: string[] = [...(call.mends ?? [])];
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return { name: call.name, arguments: args, repairs };
  const props = tool.parameters.properties;

  // A missing parameter taken from a name small models use for it (only when that name is not a parameter itself).
  for (const [param, aliases] of Object.entries(ALIASES)) {
    if (!(param in props) || param in args) continue;
    const alias = aliases.find((a) => a in args && !(a in props));
    if (alias === undefined) continue;
    args[param] = args[alias];
    delete args[alias];
    repairs.push(`${param} from ${alias}`);
  }

  for (const [param, schema] of Object.entries(props)) {
    const value = args[param];
    if (value === undefined) continue;
    if (schema.type === 'boolean' && typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
      args[param] = value.trim().toLowerCase() === 'true';
      repairs.push(`${param} "${value}" as a boolean`);
    } else if ((schema.type === 'integer' || schema.type === 'number') && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) {
      args[param] = Number(value.trim());
      repairs.push(`${param} "${value}" as a number`);
    } else if ((schema.type === 'object' || schema.type === 'array') && typeof value === 'string') {
      // An XML value is always text: a declared object or array written as JSON text becomes that value.
      const parsed = jsonOf(value);
      if (schema.type === 'array' ? Array.isArray(parsed) : parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        args[param] = parsed;
        repairs.push(`${param} text as ${schema.type === 'array' ? 'an array' : 'an object'}`);
      }
    } else if (schema.type === 'string' && Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      args[param] = value.join('\n');
      repairs.push(`${param} array joined`);
    }
    if (param === 'path' && typeof args.path === 'string' && /^(\.\/)+/.test(args.path)) {
      args.path = args.path.replace(/^(\.\/)+/, '');
      repairs.push(`path "${value}" without ./`);
    }
  }
  return { name: call.name, arguments: args, repairs };
}

/** The JSON value a text holds, or undefined when it is not JSON (nothing is ever evaluated). */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
}
