// The engine worker's error transfer lives in src/model (shared with the WASM engine's worker).
export { installErrorTransfer, registerRemoteError, RemoteEngineError } from '../model/worker-errors.ts';
