// `npm start`: build (done by the npm script), then serve the app and its signaling server on one port.
// Flags: --port N (default 8080, env PORT), --host H (default 0.0.0.0 so phones on the LAN can join), --dev.
// The built-in tiny test model (random weights, for trying the room without a download) is generated
// once into .cache/tiny-model and served under /models/tiny with Range support.
import { startServer } from '../server/app.ts';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeTinyModel } from '../src/model/tiny/write-node.ts';

const { values } = parseArgs({
  options: { port: { type: 'string' }, host: { type: 'string' }, dev: { type: 'boolean', default: false } },
});
const port = Number(values.port ?? process.env.PORT ?? 8080);
const host = values.host ?? process.env.HOST ?? '0.0.0.0';

const tinyDir = path.resolve('.cache', 'tiny-model');
if (!existsSync(path.join(tinyDir, 'config.json'))) {
  console.log('making the built-in tiny test model (random weights) in .cache/tiny-model …');
  await writeTinyModel(tinyDir, {}, 'safetensors');
}

const server = await startServer({ port, host, dev: values.dev, extraStatic: { '/models/tiny': tinyDir } });
console.log(`pooled is running: open ${server.url}/ (signaling at /signal, tiny test model at /models/tiny)`);
if (host === '0.0.0.0') {
  // Other devices reach this machine by its LAN address. Browsers give WebGPU only to secure contexts
  // (https or localhost), so a guest on plain http over the LAN needs HTTPS in front (see README).
  const lan = Object.values(networkInterfaces()).flat()
    .filter((a) => a && a.family === 'IPv4' && !a.internal).map((a) => `http://${a!.address}:${server.port}/`);
  if (lan.length) console.log(`other devices on this network: ${lan.join('  ')} (WebGPU there needs HTTPS: see README)`);
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => server.close().then(() => process.exit(0)));
