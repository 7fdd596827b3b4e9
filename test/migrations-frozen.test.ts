/**
 * A landed migration is never edited: databases that already ran it would never see the change
 * (00009 was edited twice after it landed). A change goes in a new file, whose hash is added here
 * in the same commit.
 */
import { expect, test } from 'bun:test';
import { readdir } from 'node:fs/promises';
import { MIGRATIONS_DIR } from '../scripts/lib/migrate';

const LANDED: Record<string, string> = {
  '00001_init.sql': 'ab3d37bf1ccb9d45e26cf898de9c33eef67ea0ade24d2a3eb11a42b7870ac22b',
  '00002_activity_without_foreign_keys.sql': '19631997a78afe9e284b312b1413a486841254b6c02279a9ec43b4a5ac98b12b',
  '00003_activity_indexes_ascending.sql': '1e1b05a9015a83acc1dbfb697eefeaa2e2f5d2a609b575302ab36786ad0477df',
  '00004_shardable_keys.sql': '4ebdcae5ebc4726238e838d1ff8b8f0c54c70aebb415fbe65e4a69487cd940af',
  '00005_key_expiry.sql': '05e121dbe903687bf29862f2e7568704d186605bac0ec7643aa54b91141992f2',
  '00006_origins_and_activity_detail.sql': 'db2955fe330d1fcb04ea41f507ea1900c5160db6ff7611ea68365272086f2295',
  '00007_activity_hourly.sql': 'e086e3314f886458c15f2d483d84544243fc2d303967d4597b07a7b5505031f2',
  '00008_activity_key_in_read_order.sql': 'ab3927e1e341a9a4bc72d9929247da78d76a911c8221b4c1cc4c1ec113997e15',
  '00009_activity_one_btree.sql': 'b3e5bd9523751a9d531790ab9a90891f15f5c3023e0b562b439248660a96525d',
  '00010_activity_caller_and_detail.sql': 'dfeae3af2267ae8b961e569f7e62d42f13bbab289fdbd2de6fdbfd17a9bffcc0',
  '00011_activity_refused_count.sql': 'd70d7d5388a2b77e0a00172fd2c6db2aaf8b2ea9ed9ee335165a3201de6e2538',
  '00012_key_rolled_from.sql': '445cdb22fca31743303ad9946a2b62c5574f8551c414423c3c630df502ef0a0f',
  '00013_events.sql': '638c29afd6cf0a6e81eb096b36d34b8162c6af5e4651aeef72021cdcce46e83c',
  '00014_webhooks.sql': '7732cc6cd50d65b5cdc6c702c907105afea9d491ceaf0bda8e9f0d9ea1a91ec7',
  '00015_webhook_enabled_snapshot.sql': '311ada10e3d1deb2f485afb26a53c7d378f4ef9ec09db817d08ef294eb6e268e',
  '00016_activity_id_cache.sql': '18138910dc913102f8b2ce6012b1b3b5fca68b0e3072a92e086a44c66205f811',
  '00017_activity_batches.sql': '717b3f11725c577cfab9d9f146f5fc1ebd36ec3e7dd1b79078ae1d296def7e03',
  '00018_webhook_manual_sends.sql': 'e1a7ebc8b204df3737e337f87b2a3407f4fffd5f88dc45be6d856fc18da4526e',
  '00019_webhook_fairness.sql': '45892200672001284ca6518275f57422486a0329ce6df39b759d11ca83f05d26',
  '00020_webhook_delivery_setting.sql': '833210dc91f7c433659b712333996eeb1e4da0880d7b26b3e42951e07ca8b513',
  '00021_sandboxes.sql': '399f0e0db12931e05f5870de05db2db7aef4634a5779de50655a0955e4cf210c',
  '00022_dashboard_session_mode.sql': '55d3adbaf738ddd6d4c9323e5096e478720147d7e8ef220872d01b862a1155ba',
  '00023_webhook_fanout_turns.sql': 'd6466686a6cab482ce0c70d50239a98a331eb6e2c4c62aa3850921e0e1460b9f',
};

const sha256 = async (file: string) =>
  new Bun.CryptoHasher('sha256').update(await Bun.file(file).bytes()).digest('hex');

test('every landed migration is byte for byte as it landed, and every migration file is recorded here', async () => {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const changed: string[] = [];
  for (const f of files) {
    const want = LANDED[f];
    if (!want) changed.push(`${f}: new, record its SHA-256 in test/migrations-frozen.test.ts`);
    else if ((await sha256(`${MIGRATIONS_DIR}/${f}`)) !== want)
      changed.push(`${f}: edited after it landed; put the change in a new file`);
  }
  for (const f of Object.keys(LANDED)) if (!files.includes(f)) changed.push(`${f}: deleted after it landed`);
  expect(changed).toEqual([]);
});
