import { newId } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { SandboxSeed } from '@studio/shared/schemas';
import { createClass } from '../classes/service';

/**
 * The demo studio's records (docs/design/test-mode.md): what `seed:demo` makes for a new studio and what every
 * sandbox starts from, relative to now: instructors, locations and rooms, a month of recurring classes (made through
 * the class service, so every rule holds), plans of each type, coupons, free and paid programs, videos, members, a
 * published site and policies.
 */
const DAY = 86_400_000;

/** The first `weekday` (0 = Sunday) after today (UTC), at `hour`:`minute` UTC. */
function nextWeekdayAt(weekday: number, hour: number, minute = 0): string {
  const d = new Date(Date.now() + DAY);
  d.setUTCDate(d.getUTCDate() + ((weekday - d.getUTCDay() + 7) % 7));
  d.setUTCHours(hour, minute, 0, 0);
  return d.toISOString();
}

/** Tomorrow (UTC) at `hour`:`minute`. */
function tomorrowAt(hour: number, minute = 0): string {
  const d = new Date(Date.now() + DAY);
  d.setUTCHours(hour, minute, 0, 0);
  return d.toISOString();
}

type Row = Record<string, unknown> & { id: string };

async function seedInstructors(tx: Tx, studioId: string) {
  const ins = (name: string, disciplines: string[], bio: string) => ({
    id: newId('instructor'),
    studioId,
    name,
    email: `${name.split(' ')[0]!.toLowerCase()}@lotus.test`,
    bio,
    disciplines,
  });
  const instructors = [
    ins('Maya Lind', ['vinyasa', 'yin'], 'Teaches a calm, breath-led vinyasa.'),
    ins('Tomás Ruiz', ['power yoga', 'hiit'], 'Strength first, then stretch.'),
    ins('Aiko Sato', ['pilates'], 'Mat and reformer pilates for every level.'),
    ins('Jonas Weber', ['meditation'], 'Guided meditation and breathwork.'),
  ];
  await tx`insert into instructors ${tx(instructors)}`;
  return instructors;
}

async function seedPlaces(tx: Tx, studioId: string) {
  const locations = [
    {
      id: newId('location'),
      studioId,
      name: 'Lotus Mitte',
      timezone: 'Europe/Berlin',
      address: tx.json({ line1: 'Torstraße 1', city: 'Berlin', postalCode: '10119', country: 'DE' }),
    },
    {
      id: newId('location'),
      studioId,
      name: 'Lotus Kreuzberg',
      timezone: 'Europe/Berlin',
      address: tx.json({ line1: 'Oranienstraße 20', city: 'Berlin', postalCode: '10999', country: 'DE' }),
    },
  ];
  await tx`insert into locations ${tx(locations)}`;
  const rooms = [
    { id: newId('room'), studioId, locationId: locations[0]!.id, name: 'Sun Room', capacity: 24 },
    { id: newId('room'), studioId, locationId: locations[0]!.id, name: 'Moon Room', capacity: 12 },
    { id: newId('room'), studioId, locationId: locations[1]!.id, name: 'Studio A', capacity: 30 },
  ];
  await tx`insert into rooms ${tx(rooms)}`;
  return { locations, rooms };
}

async function seedPlans(tx: Tx, studioId: string) {
  const plans = [
    {
      id: newId('plan'),
      studioId,
      name: 'Unlimited monthly',
      type: 'membership',
      description: 'Every class, every month.',
      config: tx.json({
        priceCents: 12900,
        currency: 'EUR',
        interval: 'month',
        intervalCount: 1,
        classesPerInterval: null,
      }),
    },
    {
      id: newId('plan'),
      studioId,
      name: '10-class pack',
      type: 'class_pack',
      description: 'Ten classes within six months.',
      config: tx.json({ priceCents: 16000, currency: 'EUR', classCount: 10, validityDays: 180 }),
    },
    {
      id: newId('plan'),
      studioId,
      name: 'Drop-in',
      type: 'drop_in',
      description: 'One class.',
      config: tx.json({ priceCents: 1900, currency: 'EUR' }),
    },
  ];
  await tx`insert into plans ${tx(plans)}`;
  return plans;
}

/** Maya's and Tomás's series: morning vinyasa, evening yin and power yoga. */
function yogaSeries(instructors: Row[], { locations, rooms }: { locations: Row[]; rooms: Row[] }) {
  const [maya, tomas] = instructors.map((i) => i.id) as [string, string];
  return [
    {
      title: 'Morning Vinyasa',
      mode: 'two_way',
      instructorId: maya,
      startsAt: tomorrowAt(6),
      durationMinutes: 60,
      discipline: 'vinyasa',
      level: 'all_levels',
      capacity: 24,
      locationId: locations[0]!.id,
      roomId: rooms[0]!.id,
      recurrence: { intervalDays: 1, count: 30 },
    },
    {
      title: 'Yin & Restore',
      mode: 'broadcast',
      instructorId: maya,
      startsAt: tomorrowAt(18),
      durationMinutes: 75,
      discipline: 'yin',
      level: 'beginner',
      recurrence: { intervalDays: 7, count: 5 },
    },
    {
      title: 'Power Hour',
      mode: 'two_way',
      instructorId: tomas,
      startsAt: tomorrowAt(17),
      durationMinutes: 60,
      discipline: 'power yoga',
      level: 'advanced',
      capacity: 30,
      locationId: locations[1]!.id,
      roomId: rooms[2]!.id,
      recurrence: { intervalDays: 2, count: 15 },
    },
  ] as const;
}

/** Aiko's and Jonas's series: pilates, private coaching and Sunday meditation. */
function pilatesAndMeditationSeries(instructors: Row[], { locations, rooms }: { locations: Row[]; rooms: Row[] }) {
  const [, , aiko, jonas] = instructors.map((i) => i.id) as [string, string, string, string];
  return [
    {
      title: 'Mat Pilates',
      mode: 'community',
      instructorId: aiko,
      startsAt: tomorrowAt(9),
      durationMinutes: 50,
      discipline: 'pilates',
      level: 'intermediate',
      capacity: 12,
      locationId: locations[0]!.id,
      roomId: rooms[1]!.id,
      recurrence: { intervalDays: 7, count: 5 },
    },
    {
      title: 'Private coaching',
      mode: 'coaching',
      instructorId: aiko,
      startsAt: tomorrowAt(14),
      durationMinutes: 45,
      discipline: 'pilates',
      visibility: 'private',
      capacity: 1,
      recurrence: { intervalDays: 7, count: 5 },
    },
    // on Sundays, as its title says (08:30 UTC is Sunday morning in Berlin too)
    {
      title: 'Sunday Meditation',
      mode: 'broadcast',
      instructorId: jonas,
      startsAt: nextWeekdayAt(0, 8, 30),
      durationMinutes: 30,
      discipline: 'meditation',
      recurrence: { intervalDays: 7, count: 5 },
    },
  ] as const;
}

/** A month of classes: weekly and daily series on separate hours, so no instructor is double-booked. */
const demoSeries = (instructors: Row[], places: { locations: Row[]; rooms: Row[] }) => [
  ...yogaSeries(instructors, places),
  ...pilatesAndMeditationSeries(instructors, places),
];

async function seedClasses(
  tx: Tx,
  studioId: string,
  instructors: Row[],
  { locations, rooms }: { locations: Row[]; rooms: Row[] },
  plans: Row[],
) {
  const planIds = plans.map((p) => p.id);
  const series = demoSeries(instructors, { locations, rooms });
  const classIds: string[] = [];
  for (const c of series) {
    // its events are not recorded: operator changes are not in the feed (docs/design/events.md)
    const { record } = await createClass(tx, studioId, {
      ...c,
      recurrence: { ...c.recurrence },
      planIds,
    } as Parameters<typeof createClass>[2]);
    classIds.push(record.id);
  }
  return { series, classIds };
}

async function seedCoupons(tx: Tx, studioId: string) {
  const coupons = [
    {
      id: newId('coupon'),
      studioId,
      code: 'WELCOME20',
      config: tx.json({ kind: 'percent', percentOff: 20 }),
      maxRedemptions: 100,
    },
    {
      id: newId('coupon'),
      studioId,
      code: 'FRIEND10',
      config: tx.json({ kind: 'amount', amountOffCents: 1000, currency: 'EUR' }),
      maxRedemptions: null,
    },
  ];
  await tx`insert into coupons ${tx(coupons)}`;
  return coupons;
}

async function seedPrograms(tx: Tx, studioId: string, classIds: string[]) {
  const programs = [
    {
      id: newId('program'),
      studioId,
      name: "Beginners' week",
      description: 'Seven days to start a practice.',
      pricing: 'free',
      priceCents: null,
      currency: null,
      classIds: [classIds[1]!],
    },
    {
      id: newId('program'),
      studioId,
      name: '30-day strength',
      description: 'Power yoga and pilates, four times a week.',
      pricing: 'paid',
      priceCents: 4900,
      currency: 'EUR',
      classIds: [classIds[2]!, classIds[3]!],
    },
  ];
  await tx`insert into programs ${tx(programs)}`;
  return programs;
}

async function seedVideos(tx: Tx, studioId: string, instructors: Row[]) {
  const [maya, , aiko, jonas] = instructors.map((i) => i.id) as [string, string, string, string];
  const videos = [
    {
      id: newId('content'),
      studioId,
      title: 'Sun salutation basics',
      description: 'Ten minutes, every morning.',
      durationSeconds: 600,
      instructorId: maya,
      visibility: 'public',
    },
    {
      id: newId('content'),
      studioId,
      title: 'Core pilates',
      description: 'A 25-minute mat session.',
      durationSeconds: 1500,
      instructorId: aiko,
      visibility: 'members_only',
    },
    {
      id: newId('content'),
      studioId,
      title: 'Body scan',
      description: 'Guided meditation.',
      durationSeconds: 1200,
      instructorId: jonas,
      visibility: 'private',
      status: 'processing',
    },
  ];
  await tx`insert into content ${tx(videos)}`;
  return videos;
}

async function seedPolicies(tx: Tx, studioId: string) {
  await tx`insert into policies ${tx({
    studioId,
    cancellation: 'Cancel up to 12 hours before class for a full credit.',
    lateCancelMinutes: 720,
    noShow: 'A missed class uses one credit.',
    terms: 'See lotus.test/terms.',
    privacy: 'See lotus.test/privacy.',
    waiver: 'Practice within your limits.',
  })}`;
}

async function seedCatalogue(tx: Tx, studioId: string) {
  const instructors = await seedInstructors(tx, studioId);
  const { locations, rooms } = await seedPlaces(tx, studioId);
  const plans = await seedPlans(tx, studioId);
  const { series, classIds } = await seedClasses(tx, studioId, instructors, { locations, rooms }, plans);
  const coupons = await seedCoupons(tx, studioId);
  const programs = await seedPrograms(tx, studioId, classIds);
  const videos = await seedVideos(tx, studioId, instructors);
  await seedPolicies(tx, studioId);
  return {
    instructors: instructors.length,
    locations: locations.length,
    rooms: rooms.length,
    plans: plans.length,
    classes: classIds.length,
    occurrences: series.reduce((n, c) => n + c.recurrence.count, 0),
    coupons: coupons.length,
    programs: programs.length,
    videos: videos.length,
  };
}

export const DEMO_SITE = {
  title: 'Lotus Yoga',
  tagline: 'Breathe, move, rest.',
  description: 'A neighbourhood studio in Berlin, in person and online.',
  logoUrl: 'https://lotus.test/logo.svg',
  heroImageUrl: 'https://lotus.test/hero.jpg',
  contactEmail: 'hello@lotus.test',
  phone: '+49 30 0000000',
  address: { line1: 'Torstraße 1', city: 'Berlin', postalCode: '10119', country: 'DE' },
  social: { instagram: 'https://instagram.com/lotus.test' },
};

/**
 * Members: an admin (unless the studio's creation made one: `seed:demo`'s studio has its own), an active member and
 * an invited one, so member reads answer with people. How many the studio then has.
 */
async function seedMembers(tx: Tx, studioId: string): Promise<number> {
  const [admin] = await tx`select 1 from members where studio_id = ${studioId} and role = 'admin' limit 1`;
  const members = [
    ...(admin ? [] : [{ email: 'owner@lotus.test', name: 'Sofia Brandt', role: 'admin', status: 'active' }]),
    { email: 'lena@lotus.test', name: 'Lena Fischer', role: 'member', status: 'active' },
    { email: 'omar@lotus.test', name: 'Omar Haddad', role: 'member', status: 'invited' },
  ].map((m) => ({ ...m, id: newId('member'), studioId, invitedAt: new Date() }));
  await tx`insert into members ${tx(members)}`;
  const [row] = await tx<{ n: number }[]>`select count(*)::int as n from members where studio_id = ${studioId}`;
  return row!.n;
}

/** The demo site, published. */
async function seedSite(tx: Tx, studioId: string) {
  const { address, social, ...text } = DEMO_SITE;
  const now = new Date();
  await tx`insert into sites ${tx({ studioId, ...text, address: tx.json(address), social: tx.json(social), publishedAt: now, updatedAt: now })}`;
}

/** Every record below the studio, members and its published site included, in the caller's transaction; what it made, counted. */
export async function seedStudio(tx: Tx, studioId: string): Promise<SandboxSeed> {
  const catalogue = await seedCatalogue(tx, studioId);
  const members = await seedMembers(tx, studioId);
  await seedSite(tx, studioId);
  return { ...catalogue, members };
}
