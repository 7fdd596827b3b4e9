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
 */
export const RUNTIME_ENV = { MIMALLOC_PURGE_DELAY: '-1' } as const;
