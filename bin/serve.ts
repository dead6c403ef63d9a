// `npm start`: build (done by the npm script), then serve the app and its signaling server on one port.
// Flags: --port N (default 8080, env PORT), --host H (default 0.0.0.0 so phones on the LAN can join), --dev.
import { startServer } from '../server/app.ts';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string' }, host: { type: 'string' }, dev: { type: 'boolean', default: false } },
});
const port = Number(values.port ?? process.env.PORT ?? 8080);
const host = values.host ?? process.env.HOST ?? '0.0.0.0';
const server = await startServer({ port, host, dev: values.dev });
console.log(`pooled is running: open ${server.url.replace('localhost', 'localhost')}/ (signaling at /signal)`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => server.close().then(() => process.exit(0)));
