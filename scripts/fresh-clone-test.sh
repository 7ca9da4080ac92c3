#!/usr/bin/env bash
# The README's two commands on a fresh machine without a browser: a clone of the repository in an empty
# folder, where `npm ci` must print no warning and `npm test` must pass with the browser tier reported as
# skipped. Chromium is hidden (ATRIUM_CHROMIUM points nowhere, its require flag unset); every other part the
# caller requires stays required (.ci/run requires them all), so the browser tier is the only one that may
# skip. The npm cache of the caller's install is reused (--prefer-offline).
#
#   bash scripts/fresh-clone-test.sh [jest args]
#
# What is cloned is the checkout's tracked files, uncommitted edits included (git stash create); untracked
# files are left out, as a fresh clone would not have them either.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

rev="$(git -C "$repo" stash create)"
rev="${rev:-$(git -C "$repo" rev-parse HEAD)}"
# --shared borrows the checkout's objects, so the uncommitted snapshot above can be checked out too.
git clone --quiet --shared --no-checkout "$repo" "$work/atrium" &&
  git -C "$work/atrium" checkout --quiet --detach "$rev" || { echo "cannot clone $repo"; exit 1; }
cd "$work/atrium" || exit 1
echo "fresh clone of $(git -C "$repo" rev-parse --short HEAD) in $work/atrium"

npm ci --prefer-offline --no-audit --no-fund 2>&1 | tee "$work/npm-ci.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "npm ci failed on a fresh clone"; exit 1; }
if grep -q '^npm warn' "$work/npm-ci.log"; then
  echo "npm ci printed warnings on a fresh clone (above): decide each install script in package.json's allowScripts"
  exit 1
fi
echo "npm ci printed no warning"

env -u ATRIUM_REQUIRE_CHROMIUM ATRIUM_CHROMIUM=/nonexistent npm test -- "$@" 2>&1 | tee "$work/test.log"
status=${PIPESTATUS[0]}
# The skip must be reported, not silent: the closing summary of test/support/system-parts.reporter.cjs.
if ! grep -q '^  Chromium: not found at /nonexistent\. Skipped in the browser tier' "$work/test.log"; then
  echo "npm test without Chromium did not report the browser tier as skipped"
  status=1
fi
exit "$status"
