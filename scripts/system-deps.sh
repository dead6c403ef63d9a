#!/usr/bin/env bash
# Installs the system packages the tests need, when missing and when we can (root + apt):
#   - Debian's chromium (headless browser tests; WebGPU on SwiftShader)
#   - Mesa 25 lavapipe from <codename>-backports (Vulkan for Dawn, the npm `webgpu` GPU tests in Node;
#     Debian 12's own Mesa 22 lavapipe is rejected by Dawn)
# The backports source is derived from the machine's own Debian apt sources (same mirror, suite
# <codename>-backports), one-line `.list` or deb822 `.sources` alike; no mirror host is written here.
# Prints what to run by hand when it cannot install.
#
#   scripts/system-deps.sh                     install what is missing
#   scripts/system-deps.sh --backports-source  print the source it would add (or why none), change nothing
# APT_DIR (default /etc/apt) and OS_RELEASE (default /etc/os-release) may point elsewhere (tests).
set -euo pipefail

APT_DIR=${APT_DIR:-/etc/apt}
OS_RELEASE=${OS_RELEASE:-/etc/os-release}

codename() {
  local c=""
  [ -r "$OS_RELEASE" ] && c=$(. "$OS_RELEASE" && echo "${VERSION_CODENAME:-}")
  echo "${c:-bookworm}"
}

source_files() {
  [ -f "$APT_DIR/sources.list" ] && echo "$APT_DIR/sources.list"
  for f in "$APT_DIR"/sources.list.d/*.list "$APT_DIR"/sources.list.d/*.sources; do [ -f "$f" ] && echo "$f"; done
  return 0
}

# The first enabled `deb` source whose suite is exactly $1, as "format<TAB>uri<TAB>extra":
# format "list" (extra = the [options] of the line) or "sources" (extra = a one-line Signed-By).
find_source() {
  local want=$1 f out
  for f in $(source_files); do
    case "$f" in
      *.sources)
        out=$(awk -v want="$want" '
          function flush() {
            if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no") {
              n = split(suites, s, /[ \t]+/); split(uris, u, /[ \t]+/)
              for (i = 1; i <= n; i++) if (s[i] == want && u[1] != "") { printf "sources\t%s\t%s\n", u[1], signed; found = 1; exit }
            }
            types = uris = suites = signed = enabled = ""
          }
          /^[ \t]*#/ { next }
          /^[ \t]*$/ { flush(); next }
          /^[ \t]/ { next }                                   # a continuation line (e.g. an inline key)
          { k = tolower(substr($0, 1, index($0, ":") - 1)); v = substr($0, index($0, ":") + 1)
            gsub(/^[ \t]+|[ \t]+$/, "", v)
            if (k == "types") types = v; else if (k == "uris") uris = v; else if (k == "suites") suites = v
            else if (k == "signed-by") signed = v; else if (k == "enabled") enabled = tolower(v) }
          END { if (!found) flush() }' "$f") ;;
      *)
        out=$(awk -v want="$want" '
          /^[ \t]*deb[ \t]/ {
            line = $0; sub(/^[ \t]*deb[ \t]+/, "", line); opts = ""
            if (line ~ /^\[/) { opts = substr(line, 1, index(line, "]")); line = substr(line, index(line, "]") + 1); sub(/^[ \t]+/, "", line) }
            split(line, w, /[ \t]+/)
            if (w[2] == want) { printf "list\t%s\t%s\n", w[1], opts; exit }
          }' "$f") ;;
    esac
    if [ -n "$out" ]; then echo "$out"; return 0; fi
  done
}

# The backports source to add, as "path<TAB>content"; nothing when one is configured already; exit 3
# (with the reason on stderr) when no Debian source for the release is configured to derive it from.
backports_source() {
  local c; c=$(codename)
  if [ -n "$(find_source "$c-backports")" ]; then return 0; fi
  local found; found=$(find_source "$c")
  if [ -z "$found" ]; then
    echo "no apt source for Debian $c is configured (in $APT_DIR), so $c-backports cannot be derived from it" >&2
    return 3
  fi
  local format uri extra
  IFS=$'\t' read -r format uri extra <<<"$found"
  if [ "$format" = sources ]; then
    printf '%s\t' "$APT_DIR/sources.list.d/pooled-backports.sources"
    printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\n' "$uri" "$c"
    [ -n "$extra" ] && printf 'Signed-By: %s\n' "$extra"
  else
    printf '%s\tdeb %s%s %s-backports main\n' "$APT_DIR/sources.list.d/pooled-backports.list" "${extra:+$extra }" "$uri" "$c"
  fi
}

if [ "${1:-}" = --backports-source ]; then backports_source; exit $?; fi

need_chromium=0; need_lavapipe=0
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_chromium=1
mesa_ver=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
case "$mesa_ver" in 2[5-9].*|[3-9][0-9].*) ;; *) need_lavapipe=1 ;; esac

if [ $need_chromium = 0 ] && [ $need_lavapipe = 0 ]; then exit 0; fi

release=$(codename)
added=""; why=""
if [ $need_lavapipe = 1 ]; then
  added=$(backports_source) || why=yes
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "pooled tests need Debian's chromium and Mesa 25 lavapipe ($release-backports). As root, run:" >&2
  if [ -n "$added" ]; then
    echo "  printf '%s\\n' '${added#*$'\t'}' > ${added%%$'\t'*}" >&2
  elif [ -n "$why" ]; then
    echo "  (first add an apt source for your Debian mirror with suite $release-backports)" >&2
  fi
  echo "  apt-get update && apt-get install -y chromium && apt-get install -y -t $release-backports mesa-vulkan-drivers" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ -n "$added" ]; then
  echo "Adding $release-backports from this machine's Debian mirror: ${added%%$'\t'*}"
  printf '%s\n' "${added#*$'\t'}" > "${added%%$'\t'*}"
fi
echo "Installing system packages for the tests (chromium=$need_chromium lavapipe=$need_lavapipe)…"
apt-get update -q
[ $need_chromium = 1 ] && apt-get install -y -q chromium
if [ $need_lavapipe = 1 ]; then
  if [ -n "$why" ]; then
    echo "Mesa 25 lavapipe not installed: add an apt source for your Debian mirror with suite $release-backports, then run this again." >&2
    exit 1
  fi
  apt-get install -y -q -t "$release-backports" mesa-vulkan-drivers
fi
exit 0
