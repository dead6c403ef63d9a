import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { DeployConfigError, deploymentFromConfig, loadDeployment, loadSignalingConfig, signalingFromConfig } from '../../../src/app/deploy-config.ts';
import { deployConfigFromEnv } from '../../../server/app.ts';
import { agentTools } from '../../../src/app/agent-tools.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { SYSTEM_PROMPT } from '../../../src/agent/system-prompt.ts';
import type { PreviewApi } from '../../../src/preview/types.ts';

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

describe('deployment config: the run_js switch', () => {
  test('runJs in pooled-config.json: default on, false turns it off, anything else is named', async () => {
    expect(deploymentFromConfig({}).runJs).toBe(true);
    expect(deploymentFromConfig({ runJs: false })).toEqual({ signaling: {}, runJs: false });
    expect(() => deploymentFromConfig({ runJs: 'no' })).toThrow(/runJs must be true or false, got "no"/);
    const none = (async () => new Response('', { status: 404 })) as typeof fetch;
    expect(await loadDeployment(none, 'https://app.example/')).toEqual({ signaling: {}, runJs: true });
  });

  test('our server answers it from POOLED_RUN_JS, next to the signaling settings', () => {
    expect(deployConfigFromEnv({})).toEqual({});
    expect(deployConfigFromEnv({ POOLED_RUN_JS: '0', POOLED_SIGNAL_URL: 'https://s.example/signal' })).toEqual({ runJs: false, signalUrl: 'https://s.example/signal' });
    expect(deployConfigFromEnv({ POOLED_RUN_JS: 'on' })).toEqual({ runJs: true });
    expect(() => deployConfigFromEnv({ POOLED_RUN_JS: 'maybe' })).toThrow(/POOLED_RUN_JS must be 1 or 0/);
  });

  test('off: run_js is neither among the agent\'s tools nor anywhere in the prompt it sees', () => {
    const preview = {} as PreviewApi; // the tools only call it when they run
    const files = new MemoryFiles({});
    const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
    const opening = (runJs: boolean) => {
      const schemas = agentTools(files, preview, { runJs, regexRunner: new NodeRegexRunner() }).map((t) => t.schema);
      return template.render([{ role: 'system', content: SYSTEM_PROMPT }, { role: 'user', content: 'hi' }], schemas, { enableThinking: false, addGenerationPrompt: true });
    };
    expect(opening(true)).toContain('"name": "run_js"');
    expect(opening(false)).not.toContain('run_js');
    expect(opening(false)).toContain('"name": "serve"');
  });
});
