/** How long what the server learnt of a key (its description, its SDK client) is kept: only the tool list can be that stale. */
export const KEY_INFO_TTL_MS = 60_000;
