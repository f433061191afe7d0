// A tiny static file server for web/ on 127.0.0.1, under a sub-path (default /servesim/) to prove the page
// works from one, as on GitHub Pages. Used by scripts/serve, the browser tests and scripts/bench_web.mjs.
import {createServer} from 'node:http';
import {readFile, stat} from 'node:fs/promises';
import {join, normalize, extname, sep} from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm',
  '.data': 'application/octet-stream', '.png': 'image/png', '.svg': 'image/svg+xml', '.md': 'text/plain; charset=utf-8',
};

/**
 * Starts serving `root` at http://127.0.0.1:<port><prefix>; resolves {server, url, served, close()}. `served`
 * lists [path, bytes] of every file sent (scripts/bench_web.mjs counts the bytes a page load transfers).
 */
export async function startStaticServer({root, prefix = '/servesim/', port = 0, host = '127.0.0.1'} = {}) {
  const served = [];
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path === prefix.slice(0, -1) || path === '/') return redirect(res, prefix);
      if (!path.startsWith(prefix)) return send(res, 404, 'not found');
      let file = normalize(join(root, path.slice(prefix.length)));
      if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'forbidden');
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, {'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store'});
      res.end(req.method === 'HEAD' ? undefined : body);
      if (req.method !== 'HEAD') served.push([path.slice(prefix.length), body.length]);
    } catch {
      send(res, 404, 'not found');
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const url = `http://${host}:${server.address().port}${prefix}`;
  return {server, url, served, close: () => new Promise((resolve) => server.close(resolve))};
}

function redirect(res, to) {
  res.writeHead(302, {Location: to});
  res.end();
}

function send(res, code, text) {
  res.writeHead(code, {'Content-Type': 'text/plain; charset=utf-8'});
  res.end(text);
}
