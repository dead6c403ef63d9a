import { describe, expect, test } from 'vitest';
import { DeployConfigError, loadSignalingConfig, signalingFromConfig } from '../../../src/app/deploy-config.ts';

describe('deployment config: signaling server and STUN/TURN', () => {
  test('a signaling URL becomes host, port, path and scheme', () => {
    expect(signalingFromConfig({ signalUrl: 'https://signal.example.com/peer/' })).toEqual({
      host: 'signal.example.com', port: 443, path: '/peer', secure: true,
    });
    expect(signalingFromConfig({ signalUrl: 'http://10.1.2.3:9000/signal' })).toEqual({
      host: '10.1.2.3', port: 9000, path: '/signal', secure: false,
    });
  });

  test('ICE servers pass through; an empty object keeps the defaults', () => {
    const iceServers = [{ urls: 'stun:stun.example.com:3478' }, { urls: ['turn:t.example.com'], username: 'u', credential: 'c' }];
    expect(signalingFromConfig({ iceServers })).toEqual({ iceServers });
    expect(signalingFromConfig({})).toEqual({});
  });

  test('bad values are named', () => {
    expect(() => signalingFromConfig([])).toThrow(/expected a JSON object/);
    expect(() => signalingFromConfig({ signalUrl: 'not a url' })).toThrow(DeployConfigError);
    expect(() => signalingFromConfig({ signalUrl: 'ftp://x/y' })).toThrow(/must be http\(s\), got ftp:/);
    expect(() => signalingFromConfig({ iceServers: [{ url: 'stun:x' }] })).toThrow(/iceServers must be a list/);
  });

  test('the file is fetched beside the page; missing means defaults; broken JSON is an error', async () => {
    const seen: string[] = [];
    const fake = (status: number, body: string) => (async (url: string | URL | Request) => {
      seen.push(String(url));
      return new Response(body, { status });
    }) as typeof fetch;
    expect(await loadSignalingConfig(fake(200, '{"signalUrl":"https://s.example/signal"}'), 'https://app.example/room/index.html'))
      .toMatchObject({ host: 's.example', secure: true, path: '/signal' });
    expect(seen[0]).toBe('https://app.example/room/pooled-config.json');
    expect(await loadSignalingConfig(fake(404, ''), 'https://app.example/')).toEqual({});
    await expect(loadSignalingConfig(fake(200, '<html>'), 'https://app.example/')).rejects.toThrow(/not JSON/);
    await expect(loadSignalingConfig(fake(500, ''), 'https://app.example/')).rejects.toThrow(/HTTP 500/);
  });
});
