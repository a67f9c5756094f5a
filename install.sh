#!/bin/sh
# GENERATED from scripts/install/*.sh by scripts/install/build.ts (npm run install-sh): edit those.
# gpumesh provider node installer: GPU, CPU and Network nodes, one command.
#
#   curl -fsSL <app_url>/install.sh | sh -s -- --role gpu --coordinator <url>
#
# Checks the OS, architecture and Node.js; detects NVIDIA/AMD GPUs; installs @gpumesh/node — by
# default the package the coordinator itself serves, its SHA-256 checked — with the
# node-llama-cpp build the machine needs (CUDA or Vulkan only on GPU nodes); writes the config;
# runs the node as a systemd service under a dedicated user with Restart=always (a user-level
# service, or a restart loop started at boot, where there is no system systemd). The node key in the
# state folder survives upgrades (re-running this script). --uninstall removes everything it added.
set -eu

# The coordinator serving this script fills in its own URL here.
DEFAULT_COORDINATOR="http://127.0.0.1:8080"
PACKAGE="@gpumesh/node"
# node-llama-cpp version the node is tested with; GPU builds must match it exactly.
NODE_LLAMA_CPP_VERSION="3.22.1"
MIN_NODE_MAJOR=20
MIN_NODE_MINOR=19
# node-llama-cpp's CUDA build needs a driver that supports at least this CUDA major version.
MIN_CUDA_MAJOR=12
SERVICE_NAME="gpumesh-node"
SERVICE_USER="gpumesh"
# Where the system-wide unit and the command's link go (overridable for packaging and tests).
SYSTEMD_DIR="${GPUMESH_SYSTEMD_DIR:-/etc/systemd/system}"
BIN_DIR="${GPUMESH_BIN_DIR:-/usr/local/bin}"
RECORD_NAME="install-record"

ROLE="cpu"
COORDINATOR="$DEFAULT_COORDINATOR"
PREFIX=""
STATE_DIR=""
FROM=""
FROM_PACKED=0
REGISTRY=0
VERSION="latest"
DRY_RUN=0
UNINSTALL=0
SERVICE=auto
KEEP_STATE=0
VOICE=0

usage() {
  cat <<EOF
Usage: install.sh [options]
  --role gpu|cpu|network   what this node serves (default: cpu)
  --coordinator URL        coordinator app URL (default: $DEFAULT_COORDINATOR)
  --prefix DIR             install folder (root: /opt/gpumesh-node; user: ~/.local/share/gpumesh-node)
  --state-dir DIR          node key, config-independent state, models (root: /var/lib/gpumesh-node; user: ~/.gpumesh-node)
                           (default: the package the coordinator serves, its SHA-256 checked)
  --registry               install from the npm registry instead of the coordinator
  --from PATH              install from a gpumesh repository checkout instead of the coordinator
                           (after npm ci there: packing it compiles the packages), or from a
                           folder holding its packed gpumesh-node-*.tgz and gpumesh-protocol-*.tgz
  --version V              with --registry: the package version (default: latest)
  --service KIND           auto (default: systemd if it runs, else a restart loop), system, user, loop
  --no-service             do not install a service (run \$PREFIX/bin/gpumesh-node start yourself)
  --voice                  serve voice with the built-in CPU engines instead of a model: speech
                           (espeak-ng) and transcription (pocketsphinx, US English); installs
                           espeak-ng pocketsphinx pocketsphinx-en-us sox (Debian/Ubuntu, as root)
  --dry-run                print the plan, change nothing
  --uninstall              remove everything this script added (the node key too, unless --keep-state)
  --keep-state             with --uninstall: keep the state folder (node key, models)
Environment: GPUMESH_SYSTEMD_DIR (default /etc/systemd/system) and GPUMESH_BIN_DIR (default
/usr/local/bin) say where the system-wide unit and the gpumesh-node link go; GPUMESH_INSTALL_WAIT_S
(default 120) how long, in all, to wait for a coordinator that answers 503 while it prepares the package.
EOF
}

say() { printf '%s\n' "$*"; }
warn() { printf 'install.sh: %s\n' "$*" >&2; }
die() {
  warn "$*"
  exit 1
}

# Runs a command, or prints it under --dry-run.
run() {
  if [ "$DRY_RUN" = 1 ]; then
    say "  would run: $*"
  else
    "$@"
  fi
}

# Stops the restart loop (and the node it runs) recorded in $PREFIX/run/node.pid, waiting for the
# node to drain its jobs and exit (it has 60 s, as a systemd unit's TimeoutStopSec).
stop_loop() {
  pidfile="$PREFIX/run/node.pid"
  [ -f "$pidfile" ] || return 0
  pid="$(cat "$pidfile")"
  if [ "$DRY_RUN" = 1 ]; then say "  would stop the restart loop (pid $pid)"; return 0; fi
  kill "$pid" 2>/dev/null || return 0
  waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 60 ]; do
    sleep 1
    waited=$((waited + 1))
  done
  rm -f "$pidfile"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --role) ROLE="${2:?--role needs a value}"; shift 2 ;;
    --coordinator) COORDINATOR="${2:?--coordinator needs a value}"; shift 2 ;;
    --prefix) PREFIX="${2:?--prefix needs a value}"; shift 2 ;;
    --state-dir) STATE_DIR="${2:?--state-dir needs a value}"; shift 2 ;;
    --from) FROM="${2:?--from needs a value}"; shift 2 ;;
    --registry) REGISTRY=1; shift ;;
    --version) VERSION="${2:?--version needs a value}"; shift 2 ;;
    --service) SERVICE="${2:?--service needs a value}"; shift 2 ;;
    --no-service) SERVICE=none; shift ;;
    --voice) VOICE=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --keep-state) KEEP_STATE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option $1" ;;
  esac
done

case "$ROLE" in gpu | cpu | network) ;; *) die "--role must be gpu, cpu or network (got $ROLE)" ;; esac
case "$SERVICE" in auto | system | user | loop | none) ;; *) die "--service must be auto, system, user or loop (got $SERVICE)" ;; esac
case "$COORDINATOR" in
  http://* | https://* | ws://* | wss://*) ;;
  *) die "--coordinator must be an http(s) or ws(s) URL (got $COORDINATOR)" ;;
esac
case "$COORDINATOR" in *[!A-Za-z0-9._~:/?#@!\&\(\)*+,\;=%-]*) die "--coordinator has characters a URL cannot have" ;; esac

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1
if [ -z "$PREFIX" ]; then
  if [ "$IS_ROOT" = 1 ]; then PREFIX="/opt/gpumesh-node"; else PREFIX="$HOME/.local/share/gpumesh-node"; fi
fi
if [ -z "$STATE_DIR" ]; then
  if [ "$IS_ROOT" = 1 ]; then STATE_DIR="/var/lib/gpumesh-node"; else STATE_DIR="$HOME/.gpumesh-node"; fi
fi
RECORD="$PREFIX/$RECORD_NAME"
CONFIG="$PREFIX/etc/gpumesh-node.json"

# Which service kind fits this machine: system (root + systemd), user (systemd --user), loop, none.
service_kind() {
  if [ "$SERVICE" != auto ]; then
    say "$SERVICE"
  elif [ -d /run/systemd/system ] && [ "$IS_ROOT" = 1 ]; then
    say system
  elif [ -d /run/systemd/system ] && systemctl --user show-environment >/dev/null 2>&1; then
    say user
  else
    say loop
  fi
}

# ---------------------------------------------------------------------------------------------- #
# Uninstall: undo exactly what the record says this script added.
# ---------------------------------------------------------------------------------------------- #
# Stops and removes one service this script recorded (a record line: its kind and value).
remove_service() {
  case "$1" in
    unit-system)
      run systemctl disable --now "$SERVICE_NAME" || true
      run rm -f "$2"
      run systemctl daemon-reload
      ;;
    unit-user)
      run systemctl --user disable --now "$SERVICE_NAME" || true
      run rm -f "$2"
      run systemctl --user daemon-reload
      ;;
    cron)
      if [ "$DRY_RUN" = 1 ]; then
        say "  would remove the @reboot line for $2 from the crontab"
      elif command -v crontab >/dev/null 2>&1; then
        crontab -l 2>/dev/null | grep -vF "$2" | crontab - || true
      fi
      stop_loop
      run rm -f "$2"
      ;;
  esac
}

uninstall() {
  [ -f "$RECORD" ] || die "nothing to uninstall: no $RECORD"
  say "Removing the gpumesh node installed in $PREFIX"
  while IFS=' ' read -r kind value; do
    case "$kind" in
      unit-system | unit-user | cron) remove_service "$kind" "$value" ;;
      link) run rm -f "$value" ;;
      user) run userdel "$value" || true ;;
      state)
        if [ "$KEEP_STATE" = 1 ]; then say "  keeping $value (node key, models)"; else run rm -rf "$value"; fi
        ;;
    esac
  done <"$RECORD"
  run rm -rf "$PREFIX"
  say "Removed."
}

if [ "$UNINSTALL" = 1 ]; then
  uninstall
  exit 0
fi

# ---------------------------------------------------------------------------------------------- #
# Checks: OS, architecture, Node.js, GPUs.
# ---------------------------------------------------------------------------------------------- #
OS="$(uname -s)"
ARCH="$(uname -m)"
case "$OS" in Linux | Darwin) ;; *) die "unsupported OS $OS (Linux or macOS)" ;; esac
case "$ARCH" in x86_64 | amd64) ARCH=x64 ;; aarch64 | arm64) ARCH=arm64 ;; *) die "unsupported architecture $ARCH" ;; esac

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || say 0; }
# 1 when the installed Node.js is at least $MIN_NODE_MAJOR.$MIN_NODE_MINOR.
node_recent() {
  node -e "const [a, b] = process.versions.node.split('.').map(Number); process.exit(a > $MIN_NODE_MAJOR || (a === $MIN_NODE_MAJOR && b >= $MIN_NODE_MINOR) ? 0 : 1)" 2>/dev/null
}
NODE_OK=0
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && node_recent; then
  NODE_OK=1
elif command -v node >/dev/null 2>&1 && [ "$(node_major)" -ge "$MIN_NODE_MAJOR" ]; then
  die "Node.js $(node -v) is too old: gpumesh-node needs $MIN_NODE_MAJOR.$MIN_NODE_MINOR or newer (node-llama-cpp's requirement).
  Get it from https://nodejs.org/en/download (or: curl -fsSL https://deb.nodesource.com/setup_22.x | sudo -E bash - && sudo apt-get install -y nodejs), then re-run this script."
fi

GPU_VENDOR="none"
if command -v nvidia-smi >/dev/null 2>&1 || { command -v lspci >/dev/null 2>&1 && lspci 2>/dev/null | grep -qi 'vga.*nvidia\|3d.*nvidia'; }; then
  GPU_VENDOR="nvidia"
elif [ -e /dev/kfd ] || { command -v lspci >/dev/null 2>&1 && lspci 2>/dev/null | grep -qi 'vga.*\(amd\|ati\)\|display.*\(amd\|ati\)'; }; then
  GPU_VENDOR="amd"
fi

# node-llama-cpp's GPU builds: which to install, which to replace by an empty package.
GPU_BUILD="none"
if [ "$ROLE" = gpu ] && [ "$OS" = Linux ]; then
  case "$GPU_VENDOR" in nvidia) GPU_BUILD="cuda" ;; amd) GPU_BUILD="vulkan" ;; *) GPU_BUILD="vulkan" ;; esac
fi
[ "$ROLE" = gpu ] && [ "$GPU_VENDOR" = none ] && warn "--role gpu but no NVIDIA or AMD GPU found; installing the Vulkan build"

# The CUDA build runs only on a driver that supports its CUDA version: check what nvidia-smi says.
CUDA_DRIVER=""
if [ "$GPU_BUILD" = cuda ]; then
  CUDA_DRIVER="$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)"
  if [ -z "$CUDA_DRIVER" ]; then
    warn "nvidia-smi did not answer (is the NVIDIA driver installed and loaded?); installing the Vulkan build.
  Install the driver (e.g. sudo apt-get install nvidia-driver), reboot, and re-run this script for the CUDA build."
    GPU_BUILD=vulkan
  elif [ "${CUDA_DRIVER%%.*}" -lt "$MIN_CUDA_MAJOR" ]; then
    warn "the NVIDIA driver supports CUDA $CUDA_DRIVER; node-llama-cpp's CUDA build needs $MIN_CUDA_MAJOR or newer. Installing the Vulkan build.
  Update the driver (e.g. sudo apt-get install nvidia-driver-550) and re-run this script for the CUDA build."
    GPU_BUILD=vulkan
  fi
fi

KIND="$(service_kind)"
LLAMA_BUILD="$GPU_BUILD"
GPU_SETTING="auto"
if [ "$GPU_BUILD" = none ]; then
  LLAMA_BUILD="cpu"
  GPU_SETTING="cpu"
fi
# The coordinator's own origin (an http(s) URL), where it serves the node package.
PACKAGES_BASE="$(printf '%s' "$COORDINATOR" | sed -e 's#^ws://#http://#' -e 's#^wss://#https://#' -e 's#^\(https*://[^/]*\).*#\1#')"
SOURCE="$PACKAGE from $PACKAGES_BASE/install/packages.json (SHA-256 checked)"
[ "$REGISTRY" = 1 ] && SOURCE="$PACKAGE@$VERSION from the npm registry"
if [ -n "$FROM" ]; then
  if [ -f "$FROM/node/package.json" ] && [ -f "$FROM/protocol/package.json" ]; then
    FROM_PACKED=0
  elif [ "$(find "$FROM" -maxdepth 1 -name 'gpumesh-node-*.tgz' 2>/dev/null | wc -l)" = 1 ] &&
    [ "$(find "$FROM" -maxdepth 1 -name 'gpumesh-protocol-*.tgz' 2>/dev/null | wc -l)" = 1 ]; then
    FROM_PACKED=1
  else
    die "--from $FROM is neither a gpumesh checkout nor a folder with one packed gpumesh-node and gpumesh-protocol"
  fi
  FROM="$(cd "$FROM" && pwd)"
  SOURCE="$PACKAGE from $FROM"
fi

say "gpumesh node install plan"
say "  role:         $ROLE"
say "  coordinator:  $COORDINATOR"
say "  system:       $OS $ARCH, GPU: $GPU_VENDOR${CUDA_DRIVER:+ (driver CUDA $CUDA_DRIVER)}, node-llama-cpp build: $LLAMA_BUILD"
say "  package:      $SOURCE"
say "  install into: $PREFIX"
say "  state:        $STATE_DIR (node key kept across upgrades)"
say "  config:       $CONFIG"
say "  service:      $KIND"
if [ "$VOICE" = 1 ]; then say "  voice:        espeak-ng (speech), pocketsphinx-en-us (transcription)"; fi

if [ "$NODE_OK" = 0 ]; then
  if [ "$IS_ROOT" = 1 ] && command -v apt-get >/dev/null 2>&1; then
    say "  Node.js >= $MIN_NODE_MAJOR: missing, installing from the distribution's packages"
    run apt-get update
    run apt-get install -y nodejs npm
  elif [ "$IS_ROOT" = 1 ] && command -v dnf >/dev/null 2>&1; then
    say "  Node.js >= $MIN_NODE_MAJOR: missing, installing from the distribution's packages"
    run dnf install -y nodejs npm
  elif [ "$DRY_RUN" = 0 ]; then
    die "Node.js >= $MIN_NODE_MAJOR with npm is required. Install it, then re-run this script:
  Debian/Ubuntu: sudo apt-get install -y nodejs npm   (or https://nodejs.org/en/download)
  Fedora/RHEL:   sudo dnf install -y nodejs npm
  macOS:         brew install node"
  fi
fi
if [ "$DRY_RUN" = 0 ] && [ "$NODE_OK" = 0 ] && [ "$(node_major)" -lt "$MIN_NODE_MAJOR" ]; then
  die "the distribution's Node.js is older than $MIN_NODE_MAJOR; install a newer one from https://nodejs.org/en/download"
fi

# The voice engines: Debian packages, no downloads.
VOICE_PACKAGES="espeak-ng pocketsphinx pocketsphinx-en-us sox"
voice_missing() {
  command -v espeak-ng >/dev/null 2>&1 && command -v pocketsphinx_continuous >/dev/null 2>&1 &&
    command -v sox >/dev/null 2>&1 && [ -d /usr/share/pocketsphinx/model/en-us ] && return 1
  return 0
}
if [ "$VOICE" = 1 ] && voice_missing; then
  if [ "$IS_ROOT" = 1 ] && command -v apt-get >/dev/null 2>&1; then
    say "  voice engines: missing, installing $VOICE_PACKAGES"
    # shellcheck disable=SC2086 # the package list splits on purpose
    run apt-get install -y --no-install-recommends $VOICE_PACKAGES || {
      run apt-get update
      # shellcheck disable=SC2086
      run apt-get install -y --no-install-recommends $VOICE_PACKAGES
    }
  elif [ "$DRY_RUN" = 0 ]; then
    die "--voice needs $VOICE_PACKAGES. Install them (Debian/Ubuntu: sudo apt-get install -y $VOICE_PACKAGES), then re-run this script."
  else
    say "  voice engines: missing; would need: sudo apt-get install -y $VOICE_PACKAGES"
  fi
fi

# ---------------------------------------------------------------------------------------------- #
# Install.
# ---------------------------------------------------------------------------------------------- #
APP="$PREFIX/app"
FRESH_STATE=0
[ -d "$STATE_DIR" ] || FRESH_STATE=1

# Records what was added, once per line, for --uninstall.
record() {
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  grep -qxF "$*" "$RECORD" 2>/dev/null || printf '%s\n' "$*" >>"$RECORD"
}

# The JSON overrides that swap unneeded node-llama-cpp GPU builds for an empty package.
gpu_overrides() {
  empty='"npm:empty-npm-package@1.0.0"'
  first=1
  for build in cuda cuda-ext vulkan; do
    keep=0
    case "$GPU_BUILD:$build" in cuda:cuda | cuda:cuda-ext | vulkan:vulkan) keep=1 ;; esac
    if [ "$keep" = 0 ]; then
      for platform in linux-x64 linux-arm64 win-x64; do
        [ "$first" = 1 ] || printf ','
        first=0
        printf '\n    "@node-llama-cpp/%s-%s": %s' "$platform" "$build" "$empty"
      done
    fi
  done
}

# Downloads the coordinator's node package tarballs (GET /install/packages.json lists them with
# their SHA-256) into a folder; a tarball whose SHA-256 differs is refused. A coordinator that has
# just started answers 503 with Retry-After while it packs them: the download waits as asked, up to
# GPUMESH_INSTALL_WAIT_S seconds in all (default 120), saying so, then gives up.
fetch_packages() {
  node - "$1" "$2" "${GPUMESH_INSTALL_WAIT_S:-120}" <<'NODE'
const { createHash } = require('node:crypto');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const [base, dir, waitS] = process.argv.slice(2);
const MAX_WAIT_MS = Math.max(0, Number(waitS) || 0) * 1000;
// A 503 without Retry-After is tried again after this long.
const DEFAULT_RETRY_AFTER_MS = 5000;
let waitedMs = 0;

/** Retry-After in ms: delay-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value) {
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** GET url; a 503 is retried after its Retry-After while the wait budget lasts. */
async function get(url) {
  for (;;) {
    const res = await fetch(url);
    if (res.status !== 503) return res;
    const leftMs = MAX_WAIT_MS - waitedMs;
    if (leftMs <= 0) {
      throw new Error(`${res.url}: HTTP 503 still after waiting ${Math.round(waitedMs / 1000)} s (set GPUMESH_INSTALL_WAIT_S to wait longer)`);
    }
    const pauseMs = Math.min(leftMs, Math.max(1000, retryAfterMs(res.headers.get('retry-after')) ?? DEFAULT_RETRY_AFTER_MS));
    const said = (await res.json().catch(() => undefined))?.error?.message;
    console.log(`  the coordinator is not ready (HTTP 503${said ? `: ${said}` : ''}); waiting ${Math.ceil(pauseMs / 1000)} s (up to ${Math.round(MAX_WAIT_MS / 1000)} s in all)`);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    waitedMs += pauseMs;
  }
}

(async () => {
  const listed = await get(new URL('/install/packages.json', base));
  if (!listed.ok) throw new Error(`${listed.url}: HTTP ${listed.status}`);
  const { packages } = await listed.json();
  for (const { file, sha256 } of packages) {
    if (!/^gpumesh-[a-z]+-[0-9A-Za-z.+-]+\.tgz$/.test(file)) throw new Error(`unexpected package name ${file}`);
    const res = await get(new URL(`/install/packages/${file}`, base));
    if (!res.ok) throw new Error(`${res.url}: HTTP ${res.status}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha256) throw new Error(`${file}: SHA-256 ${actual}, but the coordinator lists ${sha256}; refusing it`);
    writeFileSync(join(dir, file), bytes);
    console.log(`  ${file} (${bytes.length} bytes, SHA-256 ${actual.slice(0, 16)}…) verified`);
  }
})().catch((error) => {
  console.error(`install.sh: ${error.message}`);
  process.exit(1);
});
NODE
}

write_app_package() {
  deps="\"$PACKAGE\": \"$1\""
  [ -n "${2:-}" ] && deps="$deps, \"@gpumesh/protocol\": \"$2\""
  overrides="$(gpu_overrides)"
  [ -n "${2:-}" ] && overrides="$overrides,
    \"@gpumesh/protocol\": \"\$@gpumesh/protocol\""
  cat >"$APP/package.json" <<EOF
{
  "name": "gpumesh-node-install",
  "private": true,
  "dependencies": { $deps, "node-llama-cpp": "$NODE_LLAMA_CPP_VERSION" },
  "overrides": {$overrides,
    "node-llama-cpp": "$NODE_LLAMA_CPP_VERSION"
  }
}
EOF
}

# A first install that fails leaves nothing behind (an upgrade that fails keeps what was there).
FRESH_PREFIX=0
[ -e "$PREFIX" ] || FRESH_PREFIX=1
undo_failed_install() {
  status=$?
  [ "$status" = 0 ] && return 0
  if [ "$DRY_RUN" = 0 ] && [ "$FRESH_PREFIX" = 1 ]; then
    warn "the install failed: removing $PREFIX"
    rm -rf "$PREFIX"
    [ "$FRESH_STATE" = 1 ] && rm -rf "$STATE_DIR"
  fi
  exit "$status"
}
trap undo_failed_install EXIT

say ""
say "Installing"
run mkdir -p "$PREFIX/bin" "$PREFIX/etc" "$PREFIX/run" "$APP" "$STATE_DIR/models"
if [ "$DRY_RUN" = 0 ] && [ ! -f "$RECORD" ]; then : >"$RECORD"; fi
[ "$FRESH_STATE" = 1 ] && record state "$STATE_DIR"
run chmod 700 "$STATE_DIR"

if [ -n "$FROM" ]; then
  if [ "$DRY_RUN" = 1 ] && [ "$FROM_PACKED" = 1 ]; then
    say "  would npm install the packages in $FROM into $APP"
  elif [ "$DRY_RUN" = 1 ]; then
    say "  would pack $FROM/protocol and $FROM/node, then npm install them into $APP"
  else
    rm -f "$APP"/gpumesh-*.tgz
    if [ "$FROM_PACKED" = 1 ]; then
      cp "$FROM"/gpumesh-node-*.tgz "$FROM"/gpumesh-protocol-*.tgz "$APP"/
    else
      (cd "$FROM/protocol" && npm pack --silent --pack-destination "$APP" >/dev/null)
      (cd "$FROM/node" && npm pack --silent --pack-destination "$APP" >/dev/null)
    fi
    write_app_package "file:$(ls "$APP"/gpumesh-node-*.tgz)" "file:$(ls "$APP"/gpumesh-protocol-*.tgz)"
  fi
elif [ "$REGISTRY" = 1 ]; then
  if [ "$DRY_RUN" = 1 ]; then say "  would npm install $PACKAGE@$VERSION into $APP"; else write_app_package "$VERSION"; fi
else
  if [ "$DRY_RUN" = 1 ]; then
    say "  would download the node package from $PACKAGES_BASE/install/packages.json, check its SHA-256, npm install it into $APP"
  else
    rm -f "$APP"/gpumesh-*.tgz
    fetch_packages "$PACKAGES_BASE" "$APP" || die "the node package from $PACKAGES_BASE could not be installed (see above)"
    write_app_package "file:$(ls "$APP"/gpumesh-node-*.tgz)" "file:$(ls "$APP"/gpumesh-protocol-*.tgz)"
  fi
fi
if [ "$GPU_BUILD" = cuda ]; then
  say "  node-llama-cpp CUDA build (@node-llama-cpp/linux-$ARCH-cuda@$NODE_LLAMA_CPP_VERSION)"
elif [ "$GPU_BUILD" = vulkan ]; then
  say "  node-llama-cpp Vulkan build (@node-llama-cpp/linux-$ARCH-vulkan@$NODE_LLAMA_CPP_VERSION)"
fi
run npm install --prefix "$APP" --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error
run ln -sf "$APP/node_modules/.bin/gpumesh-node" "$PREFIX/bin/gpumesh-node"

if [ "$DRY_RUN" = 1 ]; then
  say "  would write $CONFIG"
else
  cat >"$CONFIG" <<EOF
{
  "coordinator": "$COORDINATOR",
  "role": "$ROLE",
  "stateDir": "$STATE_DIR",
  "modelsDir": "$STATE_DIR/models",
  "gpu": "$GPU_SETTING"$([ "$VOICE" = 1 ] && printf ',\n  "runtime": "voice"')
}
EOF
fi

START="$PREFIX/bin/gpumesh-node start --config $CONFIG"

# Creates the node key now (or reads the kept one), before the state folder changes owner.
NODE_ID="(created on first start)"
if [ "$DRY_RUN" = 0 ]; then
  NODE_ID="$("$PREFIX/bin/gpumesh-node" id --config "$CONFIG" 2>/dev/null)" || die "the node does not start: $PREFIX/bin/gpumesh-node id --config $CONFIG"
fi

# An upgrade to another service kind (or to none) first removes the service installed before.
case "$KIND" in system) KEEP_RECORD=unit-system ;; user) KEEP_RECORD=unit-user ;; loop) KEEP_RECORD=cron ;; *) KEEP_RECORD=none ;; esac
STALE=""
if [ -f "$RECORD" ]; then
  STALE="$(grep -E '^(unit-system|unit-user|cron) ' "$RECORD" | grep -v "^$KEEP_RECORD " || true)"
fi
if [ -n "$STALE" ]; then
  printf '%s\n' "$STALE" | while IFS=' ' read -r kind value; do
    say "  replacing the $kind service installed before"
    remove_service "$kind" "$value"
  done
  if [ "$DRY_RUN" = 0 ]; then
    grep -vxF "$STALE" "$RECORD" >"$RECORD.new" || true
    mv "$RECORD.new" "$RECORD"
  fi
fi

case "$KIND" in
  system)
    if ! id "$SERVICE_USER" >/dev/null 2>&1; then
      run useradd --system --home-dir "$STATE_DIR" --shell /usr/sbin/nologin "$SERVICE_USER"
      record user "$SERVICE_USER"
    fi
    # The GPU's device files (/dev/dri, /dev/kfd, /dev/nvidia*) belong to these groups.
    if [ "$GPU_BUILD" != none ]; then
      for group in render video; do
        if getent group "$group" >/dev/null 2>&1; then run usermod -aG "$group" "$SERVICE_USER"; fi
      done
    fi
    run chown -R "$SERVICE_USER" "$STATE_DIR"
    UNIT="$SYSTEMD_DIR/$SERVICE_NAME.service"
    if [ "$DRY_RUN" = 1 ]; then say "  would write $UNIT (User=$SERVICE_USER, Restart=always)"; else
      cat >"$UNIT" <<EOF
[Unit]
Description=gpumesh provider node
After=network-online.target
Wants=network-online.target

[Service]
User=$SERVICE_USER
ExecStart=$START
Restart=always
RestartSec=5
# SIGTERM drains in-flight jobs, then the node exits 143.
KillSignal=SIGTERM
TimeoutStopSec=60
SuccessExitStatus=130 143

[Install]
WantedBy=multi-user.target
EOF
    fi
    record unit-system "$UNIT"
    run systemctl daemon-reload
    run systemctl enable --now "$SERVICE_NAME"
    run systemctl restart "$SERVICE_NAME"
    run ln -sf "$PREFIX/bin/gpumesh-node" "$BIN_DIR/gpumesh-node"
    record link "$BIN_DIR/gpumesh-node"
    ;;
  user)
    UNIT="$HOME/.config/systemd/user/$SERVICE_NAME.service"
    run mkdir -p "$HOME/.config/systemd/user"
    if [ "$DRY_RUN" = 1 ]; then say "  would write $UNIT (Restart=always)"; else
      cat >"$UNIT" <<EOF
[Unit]
Description=gpumesh provider node

[Service]
ExecStart=$START
Restart=always
RestartSec=5
TimeoutStopSec=60
SuccessExitStatus=130 143

[Install]
WantedBy=default.target
EOF
    fi
    record unit-user "$UNIT"
    run systemctl --user daemon-reload
    run systemctl --user enable --now "$SERVICE_NAME"
    run systemctl --user restart "$SERVICE_NAME"
    say "  (to keep it running after you log out: sudo loginctl enable-linger $(id -un))"
    ;;
  loop)
    # No systemd: a restart loop (Restart=always by hand), started now and at boot from the crontab.
    # It runs the node as its child and passes SIGTERM on (the node drains, then exits), so stopping
    # the loop stops the node too. An upgrade stops the running loop first.
    LOOP="$PREFIX/bin/gpumesh-node-service"
    stop_loop
    if [ "$DRY_RUN" = 1 ]; then say "  would write $LOOP and add it to the crontab (@reboot)"; else
      cat >"$LOOP" <<EOF
#!/bin/sh
echo \$\$ >"$PREFIX/run/node.pid"
child=
trap 'if [ -n "\$child" ]; then kill "\$child" 2>/dev/null; wait "\$child"; fi; exit 0' TERM INT
while :; do
  $START >>"$PREFIX/run/node.log" 2>&1 &
  child=\$!
  wait "\$child"
  child=
  sleep 5 &
  wait \$!
done
EOF
      chmod 755 "$LOOP"
      if command -v crontab >/dev/null 2>&1; then
        (crontab -l 2>/dev/null | grep -vF "$LOOP"; printf '@reboot %s\n' "$LOOP") | crontab - || warn "the crontab refused the @reboot line: start $LOOP yourself at boot"
      else
        warn "no crontab: start $LOOP yourself at boot"
      fi
      nohup "$LOOP" >/dev/null 2>&1 &
    fi
    record cron "$LOOP"
    ;;
  none)
    say "  no service installed; start it with: $START"
    ;;
esac

say ""
if [ "$DRY_RUN" = 1 ]; then
  say "Dry run: nothing was changed."
else
  say "Installed. Node id: $NODE_ID"
  say "Put GGUF models in $STATE_DIR/models; check the setup with: $PREFIX/bin/gpumesh-node doctor --config $CONFIG"
fi
