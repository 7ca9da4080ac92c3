# syntax=docker/dockerfile:1
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/copy-assets.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

FROM node:20.20.2-bookworm-slim
ENV NODE_ENV=production ATRIUM_SANDBOX=off
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The shipped composite views (ATRIUM_VIEWS_FILE overrides, `none` turns them off).
COPY config/views.yaml ./config/views.yaml
COPY package.json ./
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD node -e "fetch('http://127.0.0.1:3000/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-semi-space-size=4", "dist/main.js"]
