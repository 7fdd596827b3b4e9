import { AppError, problems } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { CreateProgramBody, Program, UpdateProgramBody } from '@studio/shared/schemas';
import { isCurrency } from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
import * as q from './queries';

const notFound = (id: string) => problems.notFound('program', id);

/** docs/design/resources.md: paid needs a positive priceCents and a currency; free has neither. Checked on the merged values. */
function checkPrice(v: q.ProgramValues) {
  if (v.pricing === 'paid' && (v.priceCents == null || v.priceCents <= 0 || v.currency == null)) {
    throw new AppError('invalid_price', { detail: 'A paid program needs a positive priceCents and a currency.' });
  }
  if (v.pricing === 'free' && (v.priceCents != null || v.currency != null)) {
    throw new AppError('invalid_price', {
      detail: 'A free program has no priceCents or currency (send null to clear them).',
    });
  }
  if (v.currency != null && !isCurrency(v.currency)) {
    throw problems.invalidFields([{ path: '/body/currency', message: 'must be an ISO 4217 currency' }]);
  }
}

/** Every id must be a class of this studio; duplicates are kept once, in order. */
async function checkClassIds(tx: Tx, studioId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const found = await q.existingClassIds(tx, studioId, unique);
  // the path names the entry; repeating the id would grow the answer with what was sent
  const errors = ids.flatMap((id, i) =>
    found.has(id) ? [] : [{ path: `/body/classIds/${i}`, message: 'is not a class of this studio' }],
  );
  if (errors.length) throw problems.invalidFields(errors);
  return unique;
}

export async function createProgram(
  tx: Tx,
  studioId: string,
  body: CreateProgramBody,
): Promise<Written<Program, 'program.created'>> {
  const values: q.ProgramValues = {
    name: body.name,
    description: body.description ?? null,
    pricing: body.pricing ?? 'free',
    priceCents: body.priceCents ?? null,
    currency: body.currency ?? null,
    classIds: [],
    status: 'active',
  };
  checkPrice(values);
  values.classIds = await checkClassIds(tx, studioId, body.classIds ?? []);
  const program = await q.insertProgram(tx, studioId, values);
  return { record: program, events: [event('program.created', program)] };
}

/** The merged values are checked; only when they differ from the stored ones is anything written. */
export async function updateProgram(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateProgramBody,
): Promise<Written<Program, 'program.updated'>> {
  const current = await q.getProgram(tx, studioId, id, true);
  if (!current) throw notFound(id);
  const values: q.ProgramValues = {
    name: body.name ?? current.name,
    description: body.description === undefined ? current.description : body.description,
    pricing: body.pricing ?? current.pricing,
    priceCents: body.priceCents === undefined ? current.priceCents : body.priceCents,
    currency: body.currency === undefined ? current.currency : body.currency,
    classIds: current.classIds,
    status: body.status ?? current.status,
  };
  checkPrice(values);
  if (body.classIds !== undefined) values.classIds = await checkClassIds(tx, studioId, body.classIds);
  if (!Object.keys(changedFields(current, values)).length) return unchanged(current);
  const program = await q.updateProgram(tx, studioId, id, values);
  return { record: program, events: updated('program.updated', current, program) };
}
