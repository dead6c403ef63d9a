// Errors in OpenAI's shape, {error: {message, type, param, code}}, so every client library reads them
// as it reads OpenAI's own (the openai npm client throws APIError with these fields).
import type { Response } from 'express';

export interface ApiErrorBody { message: string; type: string; param: string | null; code: string | null }

export function errorBody(message: string, type: string, code: string | null = null, param: string | null = null): { error: ApiErrorBody } {
  return { error: { message, type, param, code } };
}

/** Types by status, as OpenAI names them, for errors that do not say their own. */
export function errorTypeFor(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function sendError(res: Response, status: number, message: string, code: string | null = null, param: string | null = null, type = errorTypeFor(status)): void {
  res.status(status).json(errorBody(message, type, code, param));
}
