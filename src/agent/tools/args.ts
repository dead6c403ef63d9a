// Reading a call's arguments (already repaired by src/agent/repairs.ts) with errors the model can act on.
import type { ToolOutcome } from '../tool-types.ts';
import { ProjectFileError, ProjectPathError } from '../files/paths.ts';

/** A call's arguments do not fit its tool; the message goes back to the model as the call's error. */
export class ToolArgumentError extends Error {
  override name = 'ToolArgumentError';
}

export function stringArg(args: Record<string, unknown>, name: string, tool: string): string {
  const value = args[name];
  if (value === undefined || value === null) throw new ToolArgumentError(`${tool} needs "${name}"`);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ToolArgumentError(`${tool}: "${name}" must be text, not ${Array.isArray(value) ? 'a list' : typeof value}`);
}

export function optionalString(args: Record<string, unknown>, name: string, tool: string): string | undefined {
  return args[name] === undefined || args[name] === null || args[name] === '' ? undefined : stringArg(args, name, tool);
}

export function optionalInt(args: Record<string, unknown>, name: string, tool: string): number | undefined {
  const value = args[name];
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isInteger(n)) throw new ToolArgumentError(`${tool}: "${name}" must be a whole number, not ${JSON.stringify(value)}`);
  return n;
}

export function optionalBool(args: Record<string, unknown>, name: string, tool: string): boolean {
  const value = args[name];
  if (value === undefined || value === null || value === '') return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new ToolArgumentError(`${tool}: "${name}" must be true or false, not ${JSON.stringify(value)}`);
}

/** Runs a tool body, turning argument and path errors into failed outcomes (never a thrown error). */
export async function guarded(body: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof ToolArgumentError || e instanceof ProjectPathError || e instanceof ProjectFileError) {
      return { ok: false, error: e.message };
    }
    throw e;
  }
}

export const plural = (n: number, one: string, many = one + 's'): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
