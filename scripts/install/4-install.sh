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
