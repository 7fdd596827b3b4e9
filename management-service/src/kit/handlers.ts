import { type AnyOperation, type IdKind, problems } from '@studio/shared';
import type { OperationContext, Tx } from '@studio/shared/io';
import type { ManagementDeps } from './deps';
import { runWrite, type WriteResult } from './write';

/** `runWrite` for a handler: the caller, request, body and registry row come from its context. */
export const writerOf =
  (deps: ManagementDeps) =>
  <O extends AnyOperation>(c: OperationContext<O>, action: (tx: Tx) => Promise<WriteResult<O>>) =>
    runWrite(deps, c, action);

/** A record read by id, or 404 `not_found` (another studio's id reads as missing). */
export function found<T>(record: T | null | undefined, kind: IdKind): T {
  if (record == null) throw problems.notFound(kind);
  return record;
}
