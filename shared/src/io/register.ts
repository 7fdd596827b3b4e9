import type { Static, TSchema } from '@sinclair/typebox';
import { type Context, Elysia } from 'elysia';
import { readSignedBody, readSignedJson } from '../body';
import {
  type AnyOperation,
  elysiaPath,
  type OperationId,
  type OperationIdOf,
  type OperationOf,
  operationsOf,
  pathParams,
  type Surface,
} from '../operations';
import { problems } from '../problem';
import type { Caller } from '../signing';
import { verifiedCaller } from './service-kit';

type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;

/** What a handler gets: the verified caller and the request's parts, typed from its registry row. */
export interface OperationContext<O extends AnyOperation> {
  /** The registry row the handler serves (its success status, paths). */
  operation: O;
  caller: Caller;
  request: Request;
  set: Context['set'];
  params: Record<ParamNames<O['path']>, string>;
  query: O extends { query: infer Q extends TSchema } ? Static<Q> : Record<string, string | undefined>;
  body: O extends { body: infer B extends TSchema } ? Static<B> : undefined;
}
export type Handler<Id extends OperationId> = (c: OperationContext<OperationOf<Id>>) => unknown;
/** Handlers of some operations (a resource's share); a surface's app needs them all. */
export type HandlersFor<Id extends OperationId> = { [K in Id]: Handler<K> };
export type SurfaceHandlers<S extends Surface> = HandlersFor<OperationIdOf<S>>;

/**
 * Registers every operation of `surface` from its registry row: method, path, body and
 * query schemas (validated by Elysia), the success schema (checked on returned values),
 * and path ids, which must match their resource's id pattern or the answer is 404
 * `not_found` without a database round trip. No route names its method or path by hand,
 * and the type of `handlers` demands one handler per operation of the surface.
 */
export function registerOperations<S extends Surface>(surface: S, handlers: SurfaceHandlers<S>) {
  const app = new Elysia({ name: `operations:${surface}` });
  for (const op of operationsOf(surface)) {
    const handler = (handlers as unknown as Record<string, Handler<OperationId>>)[op.id];
    if (!handler) throw new Error(`registerOperations: no handler for ${op.id}`);
    const ids = pathParams(op).map((p) => ({ name: p.name, kind: p.kind, re: new RegExp(p.pattern) }));
    app.route(
      op.method,
      elysiaPath(op.path),
      ((ctx: Context) => {
        const params = ctx.params as Record<string, string>;
        return handler({
          operation: op,
          caller: verifiedCaller(ctx.request),
          request: ctx.request,
          set: ctx.set,
          params,
          query: ctx.query,
          body: op.body ? ctx.body : undefined,
        } as OperationContext<AnyOperation> as never);
      }) as never,
      {
        // bodies are read bounded (1 MiB, 32 levels) and checked against the signed hash before Elysia validates
        // them; a body sent to a body-less operation is read (bounded, checked) and dropped, so no unread bytes
        // are left on a kept-alive connection
        ...(op.body
          ? { body: op.body, parse: ({ request }: Context) => readSignedJson(request) }
          : { parse: ({ request }: Context) => readSignedBody(request).then(() => null) }),
        ...(op.query ? { query: op.query } : {}),
        // a path id judged before the body and query are (transform runs before validation): 404 before 422, and a
        // 404 is no refusal of the request's content, so it is not stored under an Idempotency-Key
        ...(ids.length
          ? {
              transform: ({ params }: Context) => {
                for (const p of ids)
                  if (!p.re.test((params as Record<string, string>)[p.name] ?? '')) throw problems.notFound(p.kind);
              },
            }
          : {}),
        response: { [op.ok.status]: op.ok.schema },
      } as never,
    );
  }
  return app;
}
