// An API request that cannot be answered, as the OpenAI error object says it: an HTTP status, the words,
// and OpenAI's error type. The host sends it as the relay's {t:'error'} frame; the server answers with it.

export type ApiErrorType = 'invalid_request_error' | 'server_error' | 'service_unavailable';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly status: number, message: string, readonly type: ApiErrorType = status >= 500 ? 'server_error' : 'invalid_request_error') {
    super(message);
  }
}

/** A 400 naming the field at fault ("messages[2].content: …"). */
export function badRequest(where: string, why: string): ApiError {
  return new ApiError(400, `${where}: ${why}`);
}
