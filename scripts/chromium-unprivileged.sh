#!/bin/sh
# Chromium as an unprivileged user, for a process running as root (a container's default) that wants
# Chromium's own sandbox ON. Chromium refuses to start as root unless the sandbox is off (--no-sandbox);
# as any other user its namespace sandbox needs only unprivileged user namespaces (docs/platform.md,
# Chromium's sandbox). src/preview/chromium.ts gives this script to Playwright as the executable:
#   1. the profile folder Playwright made (root's, mode 0700) becomes the user's;
#   2. the process drops to POOLED_CHROMIUM_UID (default 65534, "nobody"): no groups, no capabilities,
#      no way back (no_new_privs);
#   3. it execs POOLED_CHROMIUM_REAL (default /usr/bin/chromium) with the same arguments. The DevTools
#      pipe Playwright talks over (fds 3 and 4) is inherited.
set -eu
uid=${POOLED_CHROMIUM_UID:-65534}
real=${POOLED_CHROMIUM_REAL:-/usr/bin/chromium}
profile=
for arg in "$@"; do
  case $arg in
    --user-data-dir=*) profile=${arg#--user-data-dir=} ;;
  esac
done
if [ -z "$profile" ] || [ ! -d "$profile" ]; then
  echo "chromium-unprivileged: no --user-data-dir=FOLDER among the arguments (Playwright always passes one)" >&2
  exit 2
fi
chown -R "$uid:$uid" "$profile"
exec setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs \
  env HOME="$profile" XDG_CONFIG_HOME="$profile/.config" XDG_CACHE_HOME="$profile/.cache" XDG_RUNTIME_DIR="$profile" \
  "$real" "$@"
