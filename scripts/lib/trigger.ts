/**
 * `event:trigger <type>` (docs/cli.md): a realistic change, made through the Management API with a test key, in that
 * key's sandbox, so that the event of `type` follows, with its request id and its webhooks, as for any call. A live
 * key is refused before any call: this command changes data to order.
 */
import type { EventType } from '@studio/shared';
import { type Answer, type Api, ApiError, managementApi, secretKeyOf } from './api';

/** What a recipe did: the call that records the event, and the resource it changed. */
interface Made {
  request: string;
  requestId: string;
  resourceId: string;
}
type Rec = Record<string, unknown> & { id: string };
type Recipe = (api: Api) => Promise<Made>;

const DAY = 86_400_000;
const tag = () => crypto.randomUUID().slice(0, 8);
/** A text that differs from `text`: a PATCH to the value a record already has records no event. */
const toggled = (text: string | null | undefined, mark = ' (edited)') =>
  !text ? `Edited${mark}` : text.endsWith(mark) ? text.slice(0, -mark.length) || 'Edited' : text + mark;

async function write(api: Api, method: string, path: string, body?: unknown): Promise<Made> {
  const r: Answer<Rec> = await api.call<Rec>(method, path, body);
  return { request: `${method} ${path}`, requestId: r.requestId, resourceId: r.body.id };
}

/** The first record of `path` that `match` accepts, or an error that says what to do. */
async function need<T extends Rec>(api: Api, path: string, what: string, match?: (r: T) => boolean): Promise<T> {
  const hit = await api.find<T>(path, match);
  if (!hit) throw new Error(`the sandbox has no ${what} left: reset it (sandbox:reset) and try again`);
  return hit;
}

/** A write that may meet the schedule's rules: tried with each of `bodies` until one is not double-booked. */
async function firstFree(api: Api, method: string, path: string, bodies: unknown[]): Promise<Made> {
  for (const [i, body] of bodies.entries()) {
    try {
      return await write(api, method, path, body);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'instructor_double_booked' || i === bodies.length - 1) throw err;
    }
  }
  throw new Error('unreachable');
}

/** A new weekly class of an active instructor, two months ahead (past the seeded month), in a mode the studio has. */
async function newClass(api: Api): Promise<Made> {
  const instructor = await need(api, '/v1/instructors', 'active instructor', (i) => i.active === true);
  const known = await api.find<Rec>('/v1/classes');
  const day = new Date(Date.now() + 60 * DAY);
  const starts = [8, 12, 17, 19, 21].map((hour) => {
    const d = new Date(day);
    d.setUTCHours(hour, 15 * Math.floor(Math.random() * 4), 0, 0);
    return d.toISOString();
  });
  const bodies = starts.map((startsAt) => ({
    title: `Sunrise Flow ${tag()}`,
    mode: (known?.mode as string | undefined) ?? 'broadcast',
    instructorId: instructor.id,
    startsAt,
    durationMinutes: 60,
    capacity: 16,
    recurrence: { intervalDays: 7, count: 4 },
  }));
  return firstFree(api, 'POST', '/v1/classes', bodies);
}

/** A scheduled class with occurrences still to come (a new one when the sandbox has none). */
async function upcomingClass(api: Api): Promise<string> {
  const c = await api.find<Rec>('/v1/classes', (r) => r.status === 'scheduled' && r.nextOccurrenceAt !== null);
  return c ? c.id : (await newClass(api)).resourceId;
}

const updateClass: Recipe = async (api) => {
  const id = await upcomingClass(api);
  const { body: c } = await api.get<Rec>(`/v1/classes/${id}`);
  const capacity = typeof c.capacity === 'number' ? c.capacity : 20;
  // capacity also applies to the occurrences to come: occurrence.updated follows class.updated
  return write(api, 'PATCH', `/v1/classes/${id}`, { capacity: capacity >= 10_000 ? capacity - 1 : capacity + 1 });
};
const cancelClass: Recipe = async (api) => write(api, 'DELETE', `/v1/classes/${await upcomingClass(api)}`);

const reschedule: Recipe = async (api) => {
  const from = new Date(Date.now() + 3_600_000).toISOString();
  const upcoming = `/v1/schedule?from=${encodeURIComponent(from)}`;
  const occ = await need(api, upcoming, 'scheduled occurrence', (o) => o.status === 'scheduled');
  const at = Date.parse(occ.startsAt as string);
  const bodies = [30, 60, -30, 90, 24 * 60, 48 * 60].map((min) => ({
    startsAt: new Date(at + min * 60_000).toISOString(),
  }));
  return firstFree(api, 'PATCH', `/v1/schedule/${occ.id}`, bodies);
};

const invite = (api: Api) =>
  write(api, 'POST', '/v1/members/invites', {
    email: `test-${tag()}@example.com`,
    name: 'Test Member',
    role: 'member',
  });
const activeMember = (r: Rec) => r.status === 'active' && r.role === 'member';

const newLocation = (api: Api) => write(api, 'POST', '/v1/locations', { name: `Pop-up studio ${tag()}` });
const firstLocation = (api: Api) => need(api, '/v1/locations', 'location');
async function newRoom(api: Api): Promise<Made & { rooms: string }> {
  const rooms = `/v1/locations/${(await firstLocation(api)).id}/rooms`;
  return { ...(await write(api, 'POST', rooms, { name: `Studio ${tag()}`, capacity: 12 })), rooms };
}
const newCoupon = (api: Api) =>
  write(api, 'POST', '/v1/coupons', {
    code: `TEST${tag().toUpperCase()}`,
    config: { kind: 'percent', percentOff: 15 },
  });

/** How each supported type is made to happen; occurrence.* follow their class's change. */
export const RECIPES: Record<EventType, Recipe> = {
  'class.created': newClass,
  'occurrence.created': newClass,
  'class.updated': updateClass,
  'occurrence.updated': updateClass,
  'class.cancelled': cancelClass,
  'occurrence.cancelled': cancelClass,
  'occurrence.rescheduled': reschedule,
  'member.invited': invite,
  'member.updated': async (api) => {
    const m = await api.find<Rec>('/v1/members', activeMember);
    const id = m?.id ?? (await invite(api)).resourceId;
    return write(api, 'PATCH', `/v1/members/${id}`, { name: toggled((m?.name as string) ?? 'Test Member') });
  },
  'membership.cancelled': async (api) => {
    const m = await api.find<Rec>('/v1/members', activeMember);
    return write(api, 'POST', `/v1/members/${m?.id ?? (await invite(api)).resourceId}/cancel`);
  },
  'content.updated': async (api) => {
    const v = await need(api, '/v1/content', 'video');
    return write(api, 'PATCH', `/v1/content/${v.id}`, { title: toggled(v.title as string) });
  },
  'content.deleted': async (api) => write(api, 'DELETE', `/v1/content/${(await need(api, '/v1/content', 'video')).id}`),
  'plan.created': (api) =>
    write(api, 'POST', '/v1/plans', {
      name: `Drop-in ${tag()}`,
      type: 'drop_in',
      config: { priceCents: 1800, currency: 'EUR' },
    }),
  'plan.updated': async (api) => {
    const p = await need(api, '/v1/plans', 'active plan', (r) => r.status === 'active');
    return write(api, 'PATCH', `/v1/plans/${p.id}`, { name: toggled(p.name as string) });
  },
  'plan.archived': async (api) => {
    const p = await need(api, '/v1/plans', 'active plan', (r) => r.status === 'active');
    return write(api, 'DELETE', `/v1/plans/${p.id}`);
  },
  'instructor.created': (api) =>
    write(api, 'POST', '/v1/instructors', {
      name: 'Test Instructor',
      email: `instructor-${tag()}@example.com`,
      disciplines: ['yoga'],
    }),
  'instructor.updated': async (api) => {
    const i = await need(api, '/v1/instructors', 'instructor');
    return write(api, 'PATCH', `/v1/instructors/${i.id}`, { bio: toggled(i.bio as string | null) });
  },
  'location.created': newLocation,
  'location.updated': async (api) => {
    const l = await firstLocation(api);
    return write(api, 'PATCH', `/v1/locations/${l.id}`, { name: toggled(l.name as string) });
  },
  // a new one (location.created first): a seeded location has classes to come, and deleting it is refused
  'location.deleted': async (api) => write(api, 'DELETE', `/v1/locations/${(await newLocation(api)).resourceId}`),
  'room.created': async (api) => {
    const { rooms: _, ...made } = await newRoom(api);
    return made;
  },
  'room.updated': async (api) => {
    const loc = await firstLocation(api);
    const room = await need(api, `/v1/locations/${loc.id}/rooms`, 'room');
    const capacity = typeof room.capacity === 'number' ? room.capacity : 12;
    return write(api, 'PATCH', `/v1/locations/${loc.id}/rooms/${room.id}`, {
      capacity: capacity > 1 ? capacity - 1 : 2,
    });
  },
  'room.deleted': async (api) => {
    const made = await newRoom(api);
    return write(api, 'DELETE', `${made.rooms}/${made.resourceId}`);
  },
  'coupon.created': newCoupon,
  'coupon.archived': async (api) => {
    const c = await api.find<Rec>('/v1/coupons', (r) => r.status === 'active');
    return write(api, 'DELETE', `/v1/coupons/${c?.id ?? (await newCoupon(api)).resourceId}`);
  },
  'program.created': (api) =>
    write(api, 'POST', '/v1/programs', { name: `Morning Series ${tag()}`, description: 'Four classes, one a week.' }),
  'program.updated': async (api) => {
    const p = await need(api, '/v1/programs', 'program');
    return write(api, 'PATCH', `/v1/programs/${p.id}`, { name: toggled(p.name as string) });
  },
};
export const TRIGGER_TYPES = Object.keys(RECIPES);

/** The id of the event of `type` that the request recorded, once the feed serves it (null after 5 s). */
async function eventOf(api: Api, type: string, requestId: string): Promise<string | null> {
  const deadline = Date.now() + 5_000;
  while (requestId) {
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `cursor=${encodeURIComponent(cursor)}` : `type=${type}`;
      const page = (await api.get<{ data: Rec[]; next_cursor: string | null }>(`/v1/events?limit=100&${q}`)).body;
      const hit = page.data.find((e) => e.requestId === requestId);
      if (hit) return hit.id;
      cursor = page.next_cursor;
    } while (cursor);
    // the feed serves an event once every transaction older than its own has ended (docs/design/events.md)
    if (Date.now() > deadline) return null;
    await Bun.sleep(200);
  }
  return null;
}

export async function triggerEvent(apiUrl: string, keyText: string, type: string) {
  const recipe = Object.hasOwn(RECIPES, type) ? RECIPES[type as EventType] : undefined;
  if (!recipe) throw new Error(`event:trigger cannot make ${type} happen; it can make ${TRIGGER_TYPES.join(', ')}`);
  const { key, mode } = secretKeyOf(keyText, 'event:trigger needs a test secret key (svc_sk_test_…)');
  if (mode === 'live')
    throw new Error(
      "--key is a live key: event:trigger changes data to order, so it takes a test key (svc_sk_test_…) and changes that key's sandbox only",
    );
  const api = managementApi(apiUrl, key);
  const made = await recipe(api);
  return { type, ...made, eventId: await eventOf(api, type, made.requestId) };
}
