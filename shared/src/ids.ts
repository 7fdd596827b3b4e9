import { encodeBase62 } from './base62';

export const ID_PREFIXES = {
  class: 'cls', occurrence: 'occ', instructor: 'ins', member: 'mem', plan: 'pln', coupon: 'cpn',
  program: 'prg', location: 'loc', room: 'room', content: 'vid', key: 'key', studio: 'std', activity: 'act',
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

/** `cls_` + 22 base62 chars of a UUIDv7: unique, and sorts by creation time. */
export function newId(kind: IdKind): string {
  const bytes = Bun.randomUUIDv7('buffer');
  return `${ID_PREFIXES[kind]}_${encodeBase62(BigInt('0x' + bytes.toString('hex')), 22)}`;
}

export const idPattern = (kind: IdKind) => `^${ID_PREFIXES[kind]}_[0-9A-Za-z]{1,40}$`;
