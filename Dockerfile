# One image for every role (APP_ROLE=all|api|worker). Native addons (better-sqlite3, isolated-vm)
# build from source in the build stage, so the image needs no prebuilt-binary download.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json tsconfig.sdk.json nest-cli.json ./
COPY src ./src
COPY plugins ./plugins
# Every script `npm run build` calls (api-types.js, build-console.js); a test builds from exactly these COPY lines.
COPY scripts ./scripts
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# MALLOC_ARENA_MAX: two glibc malloc arenas, not one per thread that allocates (see src/worker-processes.ts).
ENV NODE_ENV=production DATA_DIR=/data MALLOC_ARENA_MAX=2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
# The service runs as `node` (uid 1000) and writes DATA_DIR (the SQLite file, blobs, the generated
# secrets key). A named volume mounted on /data starts as a copy of this folder, owner included,
# so the folder must exist and belong to `node` before VOLUME; a root-owned one could not be written.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
# 3000: the API (roles all and api). 3001: /health, /health/ready and /metrics of a worker (WORKER_HEALTH_PORT).
EXPOSE 3000 3001
USER node
CMD ["node", "--no-node-snapshot", "dist/src/main.js"]
