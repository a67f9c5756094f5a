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
