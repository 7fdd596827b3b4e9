/** Writes the openapi-typescript clients of both documents to test/client/generated/ (run by test/client.test.ts). */

import { mkdir } from 'node:fs/promises';
import type { Surface } from '@studio/shared';
import { openApiDocument } from '@studio/shared';
import openapiTS, { astToString } from 'openapi-typescript';

export const GENERATED = new URL('./generated/', import.meta.url).pathname;

export async function generateClients(): Promise<void> {
  await mkdir(GENERATED, { recursive: true });
  for (const surface of ['storefront', 'management'] as Surface[]) {
    const ast = await openapiTS(openApiDocument(surface, { publicUrl: 'http://127.0.0.1' }) as never);
    await Bun.write(`${GENERATED}${surface}.d.ts`, astToString(ast));
  }
}

if (import.meta.main) await generateClients();
