/**
 * nginx from Debian as the anchor of the gateway's benchmarks: a keep-alive reverse
 * proxy in front of one upstream, adding fixed request headers (the gateway's signed
 * ones), one worker pinned to the servers' CPU. `nginxPath()` is null when nginx is
 * not installed, so a bench can skip it with a clear message. `launchNginx` runs any
 * such configuration (the Kong-like peer's too) from a temporary directory of its own.
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

/** What a configuration is given to fill in: its own directory (for files it writes) and the port to listen on. */
export interface NginxPlace {
  dir: string;
  port: number;
}

/**
 * One nginx worker pinned to `cpu`, from a temporary directory: `modules` loaded, and
 * `http(place)` (the directives inside `http { }`, beside the temporary paths) as its server.
 * Ready once `readyPath` answers; `stop` ends it and removes the directory.
 */
export async function launchNginx(o: {
  prefix: string;
  cpu: string;
  readyPath: string;
  modules?: string[];
  http: (place: NginxPlace) => Promise<string> | string;
}) {
  const bin = nginxPath();
  if (!bin) throw new Error('nginx is not installed (apt-get install -y nginx)');
  const place = { dir: await mkdtemp(join(tmpdir(), o.prefix)), port: await freePort() };
  const { dir } = place;
  await Bun.write(
    join(dir, 'nginx.conf'),
    `
${(o.modules ?? []).map((m) => `load_module ${m};`).join('\n')}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
${await o.http(place)}
}
`,
  );
  const child = Bun.spawn(['taskset', '-c', o.cpu, bin, '-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdout: 'ignore',
    stderr: 'inherit',
  });
  const url = `http://127.0.0.1:${place.port}`;
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

export function startNginx(o: { upstream: string; headers: Record<string, string>; cpu: string; readyPath: string }) {
  const set = Object.entries(o.headers)
    .map(([k, v]) => `      proxy_set_header ${k} ${quoted(v)};`)
    .join('\n');
  return launchNginx({
    prefix: 'studio-nginx-',
    cpu: o.cpu,
    readyPath: o.readyPath,
    http: ({ port }) => `
  access_log off;
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
  }`,
  });
}
