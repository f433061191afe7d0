#!/usr/bin/env node
// Serves web/ on 127.0.0.1 and prints the URL. Usage: node scripts/serve.mjs [port]
import {join, dirname} from 'node:path';
import {fileURLToPath} from 'node:url';
import {startStaticServer} from './lib/static_server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'web');
const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
const {url} = await startStaticServer({root, port});
console.log(`servesim web app: ${url}   (Ctrl+C to stop)`);
