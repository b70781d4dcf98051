# TaskRouter image: the compiled gateway (`npm run build`: dist/, with the workflow code bundled ahead of
# time), run as separate roles (`api`, `worker`) by docker-compose.yml. Debian-based on purpose: Temporal's
# native worker library needs glibc. Node 24 (LTS; the project supports 20.19+, 22 and 24, and Node 20 has
# reached its end of life): CI runs the unit tests on it, the rest of the suite on the machine's Node.

# Build stage: all dependencies (better-sqlite3 may compile: python3, make, g++), then `npm ci`, whose
# `prepare` script builds dist/ (the gateway, the dashboard's browser code in dist/browser/, the workflow
# bundle), then drop the development dependencies. Also uv from PyPI (pinned), whose
# two binaries (`uv`, `uvx`) the runtime stage takes: `uvx` runs the Python MCP servers of a stdio catalog.
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv make g++ && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir --disable-pip-version-check uv==0.13.9
COPY . .
RUN --mount=type=cache,target=/root/.npm npm ci && npm prune --omit=dev --ignore-scripts

# Runtime stage: production dependencies and the compiled code only; no TypeScript, tsx or webpack run here.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# The runners a stdio catalog names (docs/admin.md, "Stdio upstreams"; config/taskrouter.example.json):
# `npx` comes with Node; `uvx` is uv's, with Debian's python3 (3.11) for the servers it runs, so uv finds
# an interpreter without downloading one. Both fetch a pinned package on first use into the `node` user's
# home (~/.npm, ~/.cache/uv).
RUN apt-get update && apt-get install -y --no-install-recommends python3 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/uv/bin/uv /opt/uv/bin/uvx /usr/local/bin/
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
USER node
EXPOSE 8080
# The admin CLI in a container: node dist/src/main/admin-cli.js <command> (see docs/admin.md).
# Node flags: src/config/node-flags.ts (the young generation Node 24 would size from the heap limit).
ENTRYPOINT ["node", "--max-semi-space-size=16", "dist/src/main/serve.js"]
CMD ["all"]
