/**
 * nginx from Debian as the anchor of the gateway's benchmarks: a keep-alive reverse
 * proxy in front of one upstream, adding fixed request headers (the gateway's signed
 * ones), one worker pinned to the servers' CPU. `nginxPath()` is null when nginx is
 * not installed, so a bench can skip it with a clear message.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../lib/ports';
import { waitFor } from './stack';

export const nginxPath = (): string | null =>
  Bun.which('nginx') ?? (Bun.file('/usr/sbin/nginx').size ? '/usr/sbin/nginx' : null);

/** A header value as nginx's config language wants it (double-quoted). */
const quoted = (v: string) => `"${v.replace(/["\\$]/g, (c) => `\\${c}`)}"`;

export async function startNginx(o: {
  upstream: string;
  headers: Record<string, string>;
  cpu: string;
  readyPath: string;
}) {
  const bin = nginxPath();
  if (!bin) throw new Error('nginx is not installed (apt-get install -y nginx)');
  const dir = await mkdtemp(join(tmpdir(), 'studio-nginx-'));
  const port = await freePort();
  const set = Object.entries(o.headers)
    .map(([k, v]) => `      proxy_set_header ${k} ${quoted(v)};`)
    .join('\n');
  await Bun.write(
    join(dir, 'nginx.conf'),
    `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream service { server ${new URL(o.upstream).host}; keepalive 128; }
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
${set}
    }
  }
}
`,
  );
  const child = Bun.spawn(['taskset', '-c', o.cpu, bin, '-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdout: 'ignore',
    stderr: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + o.readyPath);
  return {
    url,
    /** The master's pid (its worker is its child). */
    pid: child.pid,
    async stop() {
      child.kill('SIGQUIT');
      await Promise.race([child.exited, Bun.sleep(3_000).then(() => child.kill('SIGKILL'))]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
