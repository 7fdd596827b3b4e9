import { randomBase62 } from '../../base62';
import { pgChannels } from '../../broadcasts';
import type { Sql } from '../db';
import { gatewaysHolding } from '../gateway-lock';

/** How long a revoke waits for the gateway to confirm (as over Redis). */
const ACK_TIMEOUT_MS = 2_000;
/** Hashes per message: a NOTIFY payload holds under 8000 bytes, a hash and its comma 65. */
const HASHES_PER_MESSAGE = 100;

/**
 * `broadcastEviction` over Postgres (single-node mode, docs/design/single-node.md): NOTIFY every gateway
 * that these keys' records are to be dropped, and wait until each one confirms on the ack
 * channel the message names (its nonce). The gateways that must confirm are those holding the
 * gateway lock (at most one in single-node mode), whose session LISTENs before it takes the
 * lock. None holds it (none runs, or it is retaking its lock): true at once, since a gateway
 * starts, and resumes, with its memory empty. False when the gateway did not confirm in time
 * or Postgres failed. Revocation needs no marker here: nothing else caches a record.
 */
export async function notifyEviction(sql: Sql, hashes: string[]): Promise<boolean> {
  for (let i = 0; i < hashes.length; i += HASHES_PER_MESSAGE) {
    if (!(await notifyBatch(sql, hashes.slice(i, i + HASHES_PER_MESSAGE)))) return false;
  }
  return true;
}

async function notifyBatch(sql: Sql, hashes: string[]): Promise<boolean> {
  const nonce = randomBase62(16);
  let acks = 0;
  let wake = () => {};
  let listening: { unlisten(): Promise<void> } | null = null;
  try {
    // listening before the message goes out, so no confirmation can come before anyone hears it
    listening = await sql.listen(pgChannels.ack(nonce), () => {
      acks++;
      wake();
    });
    const receivers = await gatewaysHolding(sql);
    await sql.notify(pgChannels.keysRevoked, `${nonce} ${hashes.join(',')}`);
    const deadline = Date.now() + ACK_TIMEOUT_MS;
    while (acks < receivers) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
    return true;
  } catch {
    return false;
  } finally {
    await listening?.unlisten().catch(() => {});
  }
}
