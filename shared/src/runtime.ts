/**
 * Settings of the Bun runtime itself. Bun reads them from the environment as a process starts,
 * so no process can set them for itself: every way we start one passes them on (`bun run start`'s
 * children in scripts/start.ts, the image's `ENV` in the Dockerfile, the benches' processes in
 * scripts/bench/stack.ts). A value already in the environment wins.
 *
 * `MIMALLOC_PURGE_DELAY=-1`: Bun's allocator (mimalloc) keeps the pages it frees for reuse instead of
 * handing them back to the kernel 10 ms later (its default) and faulting them in again on the next
 * allocation. Under load that default cost the gateway 492 `madvise` calls per 2,800 requests
 * (37 with this setting) and about 8 % of the CPU of every request, in the gateway and in a bare
 * Bun proxy alike (docs/benchmarks.md). The price: a process's RSS stays at its high-water mark
 * after a burst instead of shrinking; everything the processes cache is bounded.
 *
 * `MIMALLOC_PURGE_HOLES=0`: nor does it look, every 100 ms, for whole pages free inside its pages to hand back (Bun's
 * own allocator option, on by default). The look runs on the event loop's thread, just before it waits, and walks
 * every block freed since the last one: under load it held the gateway's loop for up to 8 ms at a time, a quarter of
 * the turns long enough to set the cached read's p99 (a `perf` probe since removed: `git log -p docs/benchmarks.md`).
 * It hands back what the first setting already keeps, so the two agree.
 */
export const RUNTIME_ENV = { MIMALLOC_PURGE_DELAY: '-1', MIMALLOC_PURGE_HOLES: '0' } as const;
