#!/usr/bin/env bash
# Make sure a headless browser for the web UI's browser test is here: Debian's chromium
# package, installed with apt-get (saying so on stderr) when /usr/bin/chromium is
# missing. Playwright drives it (`playwright install` cannot download its own builds on
# machines without internet). Prints the browser's path on stdout; exits non-zero when
# no browser could be installed (the test then skips, saying why).
#   scripts/chromium.sh            # -> /usr/bin/chromium
set -euo pipefail
BROWSER=${HUGGINGGPT_CHROMIUM:-/usr/bin/chromium}

if [ ! -x "$BROWSER" ]; then
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
    echo "chromium.sh: $BROWSER is missing and installing it needs root (apt-get install" \
         "chromium)" >&2
    exit 1
  fi
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  echo "chromium.sh: installing Chromium (Debian package chromium) for the web UI's" \
       "browser test" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! { $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq chromium >&2; }; then
    echo "chromium.sh: apt-get could not install chromium" >&2
    exit 1
  fi
fi
if [ ! -x "$BROWSER" ]; then
  echo "chromium.sh: the chromium package gave no $BROWSER" >&2
  exit 1
fi
echo "$BROWSER"
