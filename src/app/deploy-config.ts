// Deployment configuration: which signaling server and STUN/TURN servers the room uses, and whether the
// agent gets run_js. The app reads ./pooled-config.json beside index.html: our server answers it from the
// environment (POOLED_SIGNAL_URL, POOLED_ICE_SERVERS, POOLED_RUN_JS); a static deployment can ship the
// file. No file = our own server's /signal, no ICE servers (devices on one network), run_js on.
//   {"signalUrl": "https://signal.example.com/signal", "iceServers": [{"urls": "stun:stun.example.com:3478"}], "runJs": false}
import type { SignalingConfig } from '../room/signaling.ts';

export class DeployConfigError extends Error {
  override name = 'DeployConfigError';
}

export interface DeployConfig {
  signalUrl?: string;
  iceServers?: RTCIceServer[];
  /** false: the agent has no run_js tool (not in its tools, not in its prompt). Default true. */
  runJs?: boolean;
}

/** What the app takes from the deployment config. */
export interface Deployment {
  signaling: Partial<SignalingConfig>;
  runJs: boolean;
}

/** Validate the JSON and turn it into signaling overrides. Throws DeployConfigError naming the field. */
export function signalingFromConfig(raw: unknown, file = 'pooled-config.json'): Partial<SignalingConfig> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new DeployConfigError(`${file}: expected a JSON object`);
  const { signalUrl, iceServers } = raw as Record<string, unknown>;
  const out: Partial<SignalingConfig> = {};
  if (signalUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(String(signalUrl));
    } catch {
      throw new DeployConfigError(`${file}: signalUrl ${JSON.stringify(signalUrl)} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DeployConfigError(`${file}: signalUrl must be http(s), got ${url.protocol}`);
    const secure = url.protocol === 'https:';
    out.host = url.hostname;
    out.port = Number(url.port) || (secure ? 443 : 80);
    out.path = url.pathname.replace(/\/+$/, '') || '/';
    out.secure = secure;
  }
  if (iceServers !== undefined) {
    const ok = Array.isArray(iceServers) && iceServers.every((s) => s && typeof s === 'object'
      && (typeof (s as RTCIceServer).urls === 'string' || (Array.isArray((s as RTCIceServer).urls) && ((s as RTCIceServer).urls as unknown[]).every((u) => typeof u === 'string'))));
    if (!ok) throw new DeployConfigError(`${file}: iceServers must be a list of {"urls": "stun:…" | [...], "username"?, "credential"?}`);
    out.iceServers = iceServers as RTCIceServer[];
  }
  return out;
}

/** The deployment from the config's JSON (validated: a bad field throws DeployConfigError naming it). */
export function deploymentFromConfig(raw: unknown, file = 'pooled-config.json'): Deployment {
  const signaling = signalingFromConfig(raw, file);
  const { runJs } = raw as Record<string, unknown>;
  if (runJs !== undefined && typeof runJs !== 'boolean') throw new DeployConfigError(`${file}: runJs must be true or false, got ${JSON.stringify(runJs)}`);
  return { signaling, runJs: runJs ?? true };
}

/** Fetch ./pooled-config.json; a missing file means the defaults. */
export async function loadDeployment(fetchFn: typeof fetch = fetch, base: string = location.href): Promise<Deployment> {
  const url = new URL('pooled-config.json', base).href;
  const res = await fetchFn(url);
  if (res.status === 404) return { signaling: {}, runJs: true };
  if (!res.ok) throw new DeployConfigError(`${url}: HTTP ${res.status}`);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DeployConfigError(`${url}: not JSON`);
  }
  return deploymentFromConfig(json, url);
}

/** The signaling part alone. */
export async function loadSignalingConfig(fetchFn: typeof fetch = fetch, base: string = location.href): Promise<Partial<SignalingConfig>> {
  return (await loadDeployment(fetchFn, base)).signaling;
}
