#!/usr/bin/env bash
# Install the torch that pyproject.toml pins, the CPU build unless asked otherwise.
#   scripts/install_torch.sh PIP [INDEX]
# INDEX (the Makefile's TORCH_INDEX) is a PyTorch wheel index: by default the CPU one,
# https://download.pytorch.org/whl/cpu; another for a CUDA build (for example
# https://download.pytorch.org/whl/cu126); "default" for whatever the configured package
# index serves (on Linux x86_64 PyPI serves the CUDA-linked build, several GB).
# When the PyTorch index cannot be reached (an offline mirror, a closed network), torch
# comes from the configured package index instead, and the script says so.
set -euo pipefail
PIP=$1
INDEX=${2:-https://download.pytorch.org/whl/cpu}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(sed -n 's/.*"torch==\([0-9][0-9.]*\)".*/\1/p' "$ROOT/pyproject.toml" | head -n 1)
[ -n "$VERSION" ] || { echo "install_torch.sh: no torch==X pin in pyproject.toml" >&2; exit 2; }
PYTHON=$(dirname "$PIP")/python

reachable() {
  "$PYTHON" - "$1" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=10).close()
except Exception:
    sys.exit(1)
PY
}

if [ "$INDEX" != default ] && reachable "$INDEX"; then
  echo "install_torch.sh: torch==$VERSION from $INDEX" >&2
  "$PIP" install --quiet --index-url "$INDEX" "torch==$VERSION"
else
  [ "$INDEX" = default ] || echo "install_torch.sh: $INDEX is not reachable; torch==$VERSION" \
    "from the configured package index instead" >&2
  "$PIP" install --quiet "torch==$VERSION"
fi
