#!/usr/bin/env bun
import { createApiKey } from '@studio/control';
/**
 * Issue 2's figure: an authenticated Storefront read through the gateway against
 * the same read sent straight to the service (with a valid gateway signature), one run.
 * Usage: bun scripts/bench/overhead.ts [seconds]
 */
import { signedHeaders } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { createBenchStack } from './stack';
import { runWrk, type WrkResult } from './wrk';

if (!Bun.which('wrk')) {
  console.error('error: wrk is not installed (apt-get install -y wrk)');
  process.exit(1);
}
const seconds = Number(process.argv[2] ?? 10);
const stack = await createBenchStack();
await stack.start();
try {
  const sql = createSql(stack.config.DATABASE_URL, { max: 2 });
  const { studio } = await createStudio(sql, { name: 'Bench' });
  await sql`insert into instructors ${sql(Array.from({ length: 20 }, (_, i) => ({ id: `ins_bench${i}`, studioId: studio.id, name: `Instructor ${i}`, disciplines: ['yoga'] })))}`;
  const { key, record } = await createApiKey(sql, { studioId: studio.id, kind: 'publishable', name: 'bench' });
  const secret = await createApiKey(sql, {
    studioId: studio.id,
    kind: 'secret',
    name: 'bench',
    scopes: ['instructors:read'],
  });
  await sql.end();

  const path = '/v1/instructors';
  const load = { connections: 50, seconds, cpu: '1' };
  const viaGateway = await runWrk(`${stack.config.STOREFRONT_PUBLIC_URL}${path}`, {
    ...load,
    headers: { authorization: `Bearer ${key}` },
  });
  const caller = {
    studioId: studio.id,
    keyId: record.id,
    scopes: [],
    operationId: 'storefrontListInstructors',
    requestId: 'req_bench',
  };
  // the signature is valid for 60 s, longer than the run
  const direct = await runWrk(`${stack.config.STOREFRONT_SERVICE_URL}${path}`, {
    ...load,
    headers: signedHeaders(stack.config.GATEWAY_SECRET, 'GET', path, caller),
  });
  const row = (name: string, r: WrkResult) =>
    `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${String(r.non2xx).padStart(7)}`;
  console.log(`GET ${path}, 50 connections, ${seconds}s each, servers on core 0, wrk on core 1`);
  console.log(
    `${'target'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(7)}`,
  );
  console.log(row('gateway (key check, limit, proxy)', viaGateway));
  console.log(row('storefront-service direct', direct));
  console.log(
    `gateway / direct: ${((viaGateway.rps / direct.rps) * 100).toFixed(1)} % (the gateway answers Storefront reads from its cache)`,
  );

  // Management reads are never cached: this pair is the cost of the hop itself
  const mgCaller = {
    studioId: studio.id,
    keyId: secret.record.id,
    scopes: ['instructors:read'],
    operationId: 'managementListInstructors',
    requestId: 'req_bench',
  };
  const mgGateway = await runWrk(`${stack.config.MANAGEMENT_PUBLIC_URL}${path}`, {
    ...load,
    headers: { authorization: `Bearer ${secret.key}` },
  });
  const mgDirect = await runWrk(`${stack.config.MANAGEMENT_SERVICE_URL}${path}`, {
    ...load,
    headers: signedHeaders(stack.config.GATEWAY_SECRET, 'GET', path, mgCaller),
  });
  console.log(row('management: gateway (proxied)', mgGateway));
  console.log(row('management-service direct', mgDirect));
  console.log(
    `gateway / direct: ${((mgGateway.rps / mgDirect.rps) * 100).toFixed(1)} % (key check, rate limit, activity, signed fetch)`,
  );
} finally {
  await stack.stop();
}
