import { decodeBase62, encodeBase62 } from './base62';

export const ID_PREFIXES = {
  class: 'cls',
  occurrence: 'occ',
  instructor: 'ins',
  member: 'mem',
  plan: 'pln',
  coupon: 'cpn',
  program: 'prg',
  location: 'loc',
  room: 'room',
  content: 'vid',
  key: 'key',
  studio: 'std',
  activity: 'act',
  webhookEndpoint: 'whe',
  webhookDelivery: 'whd',
  event: 'evt',
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

/** `cls_` + 22 base62 chars of a UUIDv7: unique, and sorts by creation time. */
export function newId(kind: IdKind): string {
  const bytes = Bun.randomUUIDv7('buffer');
  return `${ID_PREFIXES[kind]}_${encodeBase62(BigInt(`0x${bytes.toString('hex')}`), 22)}`;
}

/** When an id of `kind` made by `newId` was made (ms since the epoch, from its UUIDv7), or null when it cannot be one. */
export function idTime(kind: IdKind, id: string): number | null {
  const prefix = `${ID_PREFIXES[kind]}_`;
  if (!id.startsWith(prefix) || id.length !== prefix.length + 22) return null;
  const n = decodeBase62(id.slice(prefix.length));
  return n === null || n >> 128n ? null : Number(n >> 80n);
}

export const idPattern = (kind: IdKind) => `^${ID_PREFIXES[kind]}_[0-9A-Za-z]{1,40}$`;
