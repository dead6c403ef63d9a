// Serves one task's project folder on 127.0.0.1 so its check opens the page from a real origin
// (localStorage and reloads behave as on a user's site).
import http from 'node:http';
import express from 'express';

export interface CheckServer {
  url: string;                 // http://127.0.0.1:PORT/
  close(): Promise<void>;
}

export async function serveFolder(folder: string): Promise<CheckServer> {
  const app = express();
  app.use(express.static(folder, { index: 'index.html', dotfiles: 'ignore', etag: false, lastModified: false, cacheControl: false }));
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
