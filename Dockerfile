# One image for every process; compose picks the entry point.
FROM oven/bun:1.4.5-slim
WORKDIR /app
COPY package.json bun.lock bunfig.toml tsconfig.json ./
COPY shared/package.json shared/
COPY gateway/package.json gateway/
COPY storefront-service/package.json storefront-service/
COPY management-service/package.json management-service/
RUN bun install --frozen-lockfile --production
COPY . .
USER bun
