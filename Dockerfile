# TaskRouter image: the same code as `npm start`, run as separate roles (`api`, `worker`) by
# docker-compose.yml. Debian-based on purpose: Temporal's native worker library needs glibc.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY scripts/unshadow-node.mjs scripts/unshadow-node.mjs
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/* \
  && npm ci && npm cache clean --force
COPY . .
USER node
EXPOSE 8080
ENTRYPOINT ["node", "--import", "tsx", "src/main/serve.ts"]
CMD ["all"]
