import type { Tx } from '@studio/shared/db';
import { problems, type IdKind } from '@studio/shared';
import type { OperationContext } from '@studio/shared/register';
import type { AnyOperation } from '@studio/shared';
import { runWrite, type WriteDeps, type WriteResult } from './write';

/** `runWrite` for a handler: the caller, request and validated body come from its context. */
export const writerOf = (deps: WriteDeps) =>
  <O extends AnyOperation>(c: OperationContext<O>, action: (tx: Tx) => Promise<WriteResult>) =>
    runWrite(deps, c.caller, c.request, c.body, action);

/** A record read by id, or 404 `not_found` (another studio's id reads as missing). */
export function found<T>(record: T | null | undefined, kind: IdKind): T {
  if (record == null) throw problems.notFound(kind);
  return record;
}

/** A write's answer with the record (200) or, for a create, 201 and its `Location`. */
export const ok = (body: unknown): WriteResult => ({ status: 200, body });
export const created = (body: { id: string }, location: string): WriteResult => ({ status: 201, body, location });
