/**
 * The Kong-like peer of the `hop` case (`bun run bench hop`) (issue 22): nginx from Debian with
 * `libnginx-mod-http-lua`, whose access phase does a gateway's work per request the way an
 * operator would deploy it instead of us: the key's SHA-256 (LuaJIT FFI to libcrypto) looked
 * up in memory, the operation's scope checked, a per-key counter in a `lua_shared_dict`, a
 * request id, and the `x-gw-*` headers HMAC-SHA256 signed exactly as the services verify
 * (shared/src/signing.ts: the signed string of docs/design/hostile-callers.md); a JSON access
 * line per request through `access_log … buffer=64k`. One worker, pinned like the others.
 */
import { join } from 'node:path';
import { EMPTY_SHA256, GW, REQUEST_ID } from '@studio/shared';
import { launchNginx, nginxPath } from './nginx';

const MODULES = ['/usr/lib/nginx/modules/ndk_http_module.so', '/usr/lib/nginx/modules/ngx_http_lua_module.so'];

/** Whether nginx and its Lua module are installed (apt-get install -y nginx libnginx-mod-http-lua lua-resty-core). */
export const kongLikeAvailable = (): boolean => nginxPath() !== null && MODULES.every((m) => Bun.file(m).size > 0);

/** One key the peer knows: its SHA-256 (hex), studio, id and scopes. */
export interface PeerKey {
  sha256: string;
  studioId: string;
  keyId: string;
  scopes: string[];
}

/** A Lua string literal. */
const lua = (s: string) => JSON.stringify(s);

const accessPhase = (keys: PeerKey[], secret: string, routes: Record<string, { operation: string; scope: string }>) => `
local ffi = require "ffi"
local C = ffi.C
ffi.cdef[[
unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md);
const void *EVP_sha256(void);
unsigned char *HMAC(const void *evp_md, const void *key, int key_len, const unsigned char *d, size_t n, unsigned char *md, unsigned int *md_len);
]]
local md = ffi.new("unsigned char[32]")
local mdlen = ffi.new("unsigned int[1]")
local HEX = {}
for i = 0, 255 do HEX[i] = string.format("%02x", i) end
local parts = {}
local function hex(buf)
  for i = 0, 31 do parts[i + 1] = HEX[buf[i]] end
  return table.concat(parts, "", 1, 32)
end
local SECRET = ${lua(secret)}
local EVP = C.EVP_sha256()
local KEYS = {
${keys.map((k) => `  [${lua(k.sha256)}] = { studio = ${lua(k.studioId)}, id = ${lua(k.keyId)}, scopes = ${lua(k.scopes.join(','))}, has = { ${k.scopes.map((s) => `[${lua(s)}] = true`).join(', ')} } },`).join('\n')}
}
local ROUTES = {
${Object.entries(routes)
  .map(([route, r]) => `  [${lua(route)}] = { op = ${lua(r.operation)}, scope = ${lua(r.scope)} },`)
  .join('\n')}
}
local counters = ngx.shared.counters
local problem = function(status, code)
  ngx.status = status
  ngx.header["content-type"] = "application/problem+json"
  ngx.say('{"type":"about:blank","status":' .. status .. ',"code":"' .. code .. '"}')
  return ngx.exit(status)
end

return function()
  local auth = ngx.var.http_authorization
  if not auth or auth:sub(1, 7) ~= "Bearer " then return problem(401, "api_key_required") end
  local text = auth:sub(8)
  C.SHA256(text, #text, md)
  local key = KEYS[hex(md)]
  if not key then return problem(401, "api_key_invalid") end
  local route = ROUTES[ngx.var.request_method .. " " .. ngx.var.uri]
  if not route then return problem(404, "not_found") end
  if not key.has[route.scope] then return problem(403, "scope_required") end
  local used = counters:incr(key.id, 1, 0)
  if used > 1e12 then return problem(429, "rate_limited") end
  local rid = "req_" .. ngx.var.request_id
  local ts = string.format("%d", ngx.now() * 1000)
  local signed = table.concat({ ts, ngx.var.request_method, ngx.var.request_uri, key.studio, key.id, key.scopes, route.op, rid, ${lua(EMPTY_SHA256)}, "" }, "\\n")
  C.HMAC(EVP, SECRET, #SECRET, signed, #signed, md, mdlen)
  local set = ngx.req.set_header
  for name in pairs(ngx.req.get_headers()) do
    if name:sub(1, 5) == "x-gw-" then ngx.req.clear_header(name) end
  end
  set(${lua(GW.studio)}, key.studio)
  set(${lua(GW.key)}, key.id)
  set(${lua(GW.scopes)}, key.scopes)
  set(${lua(GW.operation)}, route.op)
  set(${lua(GW.timestamp)}, ts)
  set(${lua(GW.signature)}, hex(md))
  set(${lua(REQUEST_ID)}, rid)
  ngx.var.studio_key = key.id
  ngx.var.studio_op = route.op
end
`;

export function startKongLike(o: {
  upstream: string;
  secret: string;
  keys: PeerKey[];
  routes: Record<string, { operation: string; scope: string }>;
  cpu: string;
  readyPath: string;
}) {
  if (!kongLikeAvailable())
    throw new Error('nginx with its Lua module is not installed (apt-get install -y nginx libnginx-mod-http-lua)');
  return launchNginx({
    prefix: 'studio-kong-like-',
    cpu: o.cpu,
    readyPath: o.readyPath,
    modules: MODULES,
    http: async ({ dir, port }) => {
      await Bun.write(join(dir, 'access.lua'), accessPhase(o.keys, o.secret, o.routes));
      return `
  lua_package_path "/usr/share/lua/5.1/?.lua;;";
  lua_shared_dict counters 16m;
  init_by_lua_block { access = dofile(${lua(join(dir, 'access.lua'))}) }
  log_format json escape=json '{"time":"$time_iso8601","msg":"request","requestId":"req_$request_id","operation":"$studio_op","method":"$request_method","path":"$uri","status":$status,"durationMs":$request_time,"keyId":"$studio_key"}';
  access_log ${dir}/access.log json buffer=64k flush=1s;
  upstream service { server ${new URL(o.upstream).host}; keepalive 128; }
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
    keepalive_requests 1000000;
    location = ${o.readyPath} { access_log off; proxy_pass http://service; proxy_http_version 1.1; proxy_set_header Connection ""; }
    location / {
      set $studio_key "";
      set $studio_op "";
      access_by_lua_block { access() }
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`;
    },
  });
}
