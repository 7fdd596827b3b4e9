# One image for every process; compose picks the entry point.
FROM oven/bun:1.4.5-slim
WORKDIR /app
COPY package.json bun.lock bunfig.toml tsconfig.json ./
COPY shared/package.json shared/
COPY control/package.json control/
COPY gateway/package.json gateway/
COPY dashboard/package.json dashboard/
COPY storefront-service/package.json storefront-service/
COPY management-service/package.json management-service/
COPY sdk/package.json sdk/
COPY mcp/package.json mcp/
# the lockfile's patched dependencies: bun install refuses to run without their patch files
COPY patches/ patches/
RUN bun install --frozen-lockfile --production
COPY . .
# the runtime's own settings (shared/src/runtime.ts says why; test/runtime-env.test.ts holds the two to the same values)
ENV MIMALLOC_PURGE_DELAY=-1
ENV MIMALLOC_PURGE_HOLES=0
USER bun
