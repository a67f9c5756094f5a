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
