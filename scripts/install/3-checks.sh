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
