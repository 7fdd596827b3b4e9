import { createApiKey } from '@studio/control';
import { createSandboxIn, DEFAULT_SANDBOX, seedStudio } from '@studio/management-service/sandboxes';
import { type Config, SCOPES, scopesOfMode } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { checkStudio, insertStudio } from './studios';

/**
 * A demo studio with every kind of record: instructors, locations and rooms, a month of
 * recurring classes (made through the same service as the API, so every rule holds),
 * plans of each type, coupons, free and paid programs, videos, members, a published site and
 * policies (`seedStudio`, what every sandbox starts from too), one key of each kind, and its
 * default sandbox with one test key of each kind (docs/design/test-mode.md). The keys appear in
 * the result once and never again.
 * One transaction: a failure at any step (the keys last) leaves no half-made studio behind.
 * Nothing in it tells other processes anything, so nothing waits for the commit: no key is
 * evicted, and no Storefront change is sent (site:publish sends one, for a site a gateway may
 * have cached; no gateway can have cached one of a studio that did not exist, with no keys).
 */
export async function seedDemo(sql: Sql, _config: Config) {
  const checked = checkStudio({ name: 'Lotus Yoga (demo)', timezone: 'Europe/Berlin', currency: 'EUR' });
  return sql.begin(async (tx) => {
    const { studio, admin } = await insertStudio(tx, checked);
    const studioId = studio.id;
    const created = await seedStudio(tx, studioId);
    const sandbox = await createSandboxIn(tx, studioId, DEFAULT_SANDBOX);
    const publishable = await createApiKey(tx, { studioId, kind: 'publishable', name: 'demo website' });
    const secret = await createApiKey(tx, { studioId, kind: 'secret', name: 'demo back-office', scopes: [...SCOPES] });
    const testPublishable = await createApiKey(tx, {
      studioId: sandbox.id,
      kind: 'publishable',
      name: 'demo website (test)',
    });
    const testSecret = await createApiKey(tx, {
      studioId: sandbox.id,
      kind: 'secret',
      name: 'demo back-office (test)',
      scopes: [...scopesOfMode('test')],
    });
    return {
      studio: { id: studioId, name: studio.name, slug: studio.slug },
      admin: { id: admin.id, email: admin.email },
      created,
      sandbox: { id: sandbox.id, name: sandbox.name },
      keys: {
        note: 'Shown once: these full keys are not stored and cannot be displayed again.',
        publishable: publishable.key,
        secret: secret.key,
      },
      testKeys: {
        note: "Test mode: these keys reach the studio's default sandbox, never its live data (docs/design/test-mode.md).",
        publishable: testPublishable.key,
        secret: testSecret.key,
      },
    };
  });
}
