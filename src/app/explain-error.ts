// Errors in plain words: what happened, the likely cause, what to do. The technical text ("Name: message")
// stays as it is, for the folded detail under the explanation; this only reads it.

export interface ExplainedError {
  what: string;
  cause: string;
  todo: string;
  /** The original "Name: message", shown folded. */
  detail: string;
}

interface Rule { test: RegExp; what: string; cause: string; todo: string }

const CORS = "it is not running at that address, or it does not allow this page's origin (CORS, the usual cause): llama.cpp's server allows it by default; vLLM needs --allowed-origins, Ollama OLLAMA_ORIGINS";

/** First match wins: specific names and messages before the general ones. */
const RULES: readonly Rule[] = [
  {
    test: /^ServerError\b[\s\S]*(cannot be reached|Failed to fetch|NetworkError|Load failed)/i,
    what: 'The model server did not answer.', cause: `Likely ${CORS}.`,
    todo: 'Start the server or allow this origin, then Retry; or go back and host a room instead.',
  },
  {
    test: /^ServerError\b/,
    what: 'The model server refused the request.', cause: 'It answered, but not as an OpenAI-compatible server serving that model name would.',
    todo: "Check the URL and the model's name on the server, then Retry.",
  },
  {
    test: /^JoinError\b[\s\S]*(not open|host is gone|closed)/i,
    what: 'This room is closed.', cause: 'Its host closed the room or its tab, so the invite link no longer leads anywhere.',
    todo: 'Ask the host for a new invite link, or host a room yourself.',
  },
  {
    test: /^JoinError\b/,
    what: 'This device could not join the room.', cause: 'The host did not accept the connection in time (another network, or the host is busy).',
    todo: 'Retry; if it keeps failing, ask for a new invite link.',
  },
  {
    test: /^(ModelSourceError|HttpError|TypeError)\b[\s\S]*(Failed to fetch|NetworkError|Load failed|cannot be reached)/i,
    what: "The model's files could not be downloaded.", cause: 'This device is offline, or the place the model comes from (Hugging Face or the URL given) cannot be reached from here.',
    todo: 'Check the connection and Retry, or pick another model (the built-in tiny model needs no download).',
  },
  {
    test: /^(ModelSourceError\b[\s\S]*\b(404|not found|does not exist)|ConfigError\b[\s\S]*\bneither\b[\s\S]*\bfound\b)/i,
    what: "The model's files were not found where they were looked for.", cause: 'The id, URL or quant name does not match a model with these files (the server answered "not found").',
    todo: 'Check the model id (e.g. Qwen/Qwen3-1.7B or Qwen/Qwen3-8B-GGUF:Q4_K_M) and Retry.',
  },
  {
    test: /^(ModelSourceError|ModelFileError|ConfigError|HeaderError|UnknownFormatError|UnsupportedArchitectureError|UnsupportedDTypeError|UnsupportedTensorTypeError|UnsupportedTokenizerError|TensorMissingError|TruncatedFileError)\b/,
    what: 'The model could not be read.', cause: 'Its files are missing something this app needs, or are not a Qwen3 / Qwen3.5 model.',
    todo: 'Pick another model, or check the folder has config.json, tokenizer.json and the weights.',
  },
  {
    test: /^DealError\b[\s\S]*memory/i,
    what: "The room's devices do not have enough memory for this model.", cause: 'Together they offer less than its weights and its context need.',
    todo: 'Add a device, offer more memory, choose a smaller context, or pick a smaller model.',
  },
  {
    test: /^ReplayScriptError\b/,
    what: 'The scripted demo could not be read.', cause: 'Its script is missing or not one JSON reply a line.',
    todo: 'Retry, or open the demo without a script parameter.',
  },
  {
    test: /^UrlParamError\b/,
    what: "The page's address has a setting this app cannot use.", cause: 'A parameter after the ? is misspelt or out of range.',
    todo: 'Start over from the plain address, or fix the parameter named below.',
  },
  {
    test: /(Failed to fetch|NetworkError|Load failed)/i,
    what: 'Something could not be downloaded.', cause: 'This device is offline, or a server cannot be reached from here.',
    todo: 'Check the connection and Retry.',
  },
];

/** `raw` is "Name: message" (as the sessions store their errors). */
export function explainError(raw: string): ExplainedError {
  const rule = RULES.find((r) => r.test.test(raw));
  if (rule) return { what: rule.what, cause: rule.cause, todo: rule.todo, detail: raw };
  const firstLine = raw.split('\n')[0]!.replace(/^[A-Z]\w*Error:\s*/, '');
  return { what: 'Something went wrong.', cause: firstLine.length > 0 ? `${firstLine.charAt(0).toUpperCase()}${firstLine.slice(1)}.`.replace(/\.\.$/, '.') : 'No reason was given.', todo: 'Retry, or go back to the start.', detail: raw };
}
