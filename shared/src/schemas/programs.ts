import { type Static, Type as t } from '@sinclair/typebox';
import { CurrencyCode, Id, IdOut, MAX_MINOR_UNITS, Nullable, Page, Text, Timestamp } from './fields';

const pricing = t.Union([t.Literal('free'), t.Literal('paid')]);

export const Program = t.Object({
  id: IdOut('prg_…'),
  name: t.String({ maxLength: 200 }),
  description: Nullable(t.String({ maxLength: 5000 })),
  pricing,
  priceCents: Nullable(t.Integer()),
  currency: Nullable(t.String({ maxLength: 3 })),
  classIds: t.Array(IdOut(), { maxItems: 500 }),
  status: t.Union([t.Literal('active'), t.Literal('archived')]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Program = Static<typeof Program>;
export const ProgramPage = Page(Program);

const fields = {
  name: Text(200, { minLength: 1 }),
  description: Nullable(Text(5000)),
  pricing,
  // No lower bound here: a paid program's non-positive price is `invalid_price`, checked by the service.
  priceCents: Nullable(
    t.Integer({
      maximum: MAX_MINOR_UNITS,
      description: 'Integer minor units; > 0 when paid, absent or null when free',
    }),
  ),
  currency: Nullable(CurrencyCode),
  classIds: t.Array(Id(), { maxItems: 500, description: 'Classes of the studio' }),
};

export const CreateProgramBody = t.Object(
  {
    name: fields.name,
    description: t.Optional(fields.description),
    pricing: t.Optional(t.Union([t.Literal('free'), t.Literal('paid')], { description: 'Default free' })),
    priceCents: t.Optional(fields.priceCents),
    currency: t.Optional(fields.currency),
    classIds: t.Optional(fields.classIds),
  },
  { additionalProperties: false },
);
export type CreateProgramBody = Static<typeof CreateProgramBody>;

/** The merged result (stored values overlaid with these) must satisfy the price rule. */
export const UpdateProgramBody = t.Object(
  {
    name: t.Optional(fields.name),
    description: t.Optional(fields.description),
    pricing: t.Optional(fields.pricing),
    priceCents: t.Optional(fields.priceCents),
    currency: t.Optional(fields.currency),
    classIds: t.Optional(fields.classIds),
    status: t.Optional(
      t.Union([t.Literal('active'), t.Literal('archived')], {
        description: 'archived: kept and readable, no longer offered; active again restores it',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateProgramBody = Static<typeof UpdateProgramBody>;
