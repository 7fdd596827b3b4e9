import { createClient } from 'redis';


/**
 * A client that never queues commands while disconnected (they fail at once, so
 * callers fall back to Postgres instead of hanging) and keeps reconnecting.
 */
function build(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) },
  });
}
export type Redis = ReturnType<typeof build>;

export function createRedis(url: string, name = 'redis'): Redis {
  const client = build(url);
  let lastLog = 0;
  client.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastLog > 10_000) {
      lastLog = now;
      console.warn(JSON.stringify({ level: 'warn', msg: `${name} error`, error: err.message }));
    }
  });
  return client;
}

/** Connect without letting an unreachable Redis stop the process from starting. */
export async function connectRedis(client: Redis): Promise<void> {
  await Promise.race([client.connect().catch(() => {}), Bun.sleep(2_000)]);
}

export async function pingRedis(client: Redis): Promise<boolean> {
  try {
    return client.isReady && (await client.ping()) === 'PONG';
  } catch {
    return false;
  }
}

/** Close gracefully when connected; a client still retrying an unreachable server is just destroyed. */
export async function quitRedis(client: Redis): Promise<void> {
  if (!client.isOpen) return;
  if (!client.isReady) return client.destroy();
  try {
    await Promise.race([client.close(), Bun.sleep(1_000).then(() => client.destroy())]);
  } catch {
    client.destroy();
  }
}
