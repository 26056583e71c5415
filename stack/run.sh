#!/usr/bin/env bash
# Entry point of `npm start`, `npm test` and `npm run bench`: installs what is missing (Debian
# packages, npm dependencies), quickly when nothing is, then hands over to the Deno CLI.
#
# Signals: npm passes SIGINT and SIGTERM sent to its own pid to its child, the `sh -c` it runs the
# script with, which would die without passing them on. So the package.json scripts `exec` this
# file, and this file `exec`s deno: npm's child is deno itself, and deno stops everything
# (stack/cli.ts).
set -euo pipefail
cd "$(dirname "$0")/.."

command_name="${1:-start}"
shift || true

debian_packages=(postgresql-15 postgresql-15-cron postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl)
if [ "$command_name" = "bench" ]; then debian_packages+=(wrk); fi
# The browser tests and the web benchmark drive Debian's Chromium through playwright-core.
if [ "$command_name" = "test" ] || [ "$command_name" = "bench" ]; then debian_packages+=(chromium); fi
# The tests run the API through PgBouncer in transaction mode (stack/pgbouncer.ts starts its own).
if [ "$command_name" = "test" ]; then debian_packages+=(pgbouncer); fi

missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts a default cluster on 5432; Agora runs its own clusters and needs none of it.
  "${sudo_cmd[@]}" pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
  # Likewise Debian's PgBouncer service (port 6432): the tests start their own on a free port.
  if [[ " ${missing[*]} " == *" pgbouncer "* ]]; then
    "${sudo_cmd[@]}" service pgbouncer stop >/dev/null 2>&1 || true
  fi
fi

# npm dependencies: reinstall only when package-lock.json or patches/ (applied by patch-package
# after every install, see patches/README.md) changed since the last install.
stamp=node_modules/.agora-lock-hash
lock_hash=$(cat package-lock.json patches/* | sha256sum | cut -d' ' -f1)
if [ ! -x node_modules/.bin/deno ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
  echo "[setup] installing npm dependencies"
  # The lock lists every platform's optional deno and anvil package (as npm writes it), so
  # `npm install` installs this machine's and leaves package-lock.json as committed.
  npm install --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

export PATH="$PWD/node_modules/.bin:$PATH"
# exec: deno replaces this shell, so the signals npm passes on reach it (see the top).
exec deno run --allow-all --quiet stack/cli.ts "$command_name" "$@"
