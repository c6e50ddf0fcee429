#!/bin/sh
# Stands in for an environment's python: runs a real interpreter,
# $FAKE_REAL_PYTHON (whatever framework release that one has). With
# $FAKE_PY_HOLD set, a worker asked to train first makes the file
# $FAKE_PY_HOLD.started, then waits for $FAKE_PY_HOLD.go.
case " $* " in
*" train "*)
  if [ -n "$FAKE_PY_HOLD" ]; then
    : > "$FAKE_PY_HOLD.started"
    n=0
    while [ ! -e "$FAKE_PY_HOLD.go" ]; do
      n=$((n + 1))
      if [ "$n" -gt 3000 ]; then
        exit 1
      fi
      sleep 0.1
    done
  fi
  ;;
esac
exec "$FAKE_REAL_PYTHON" "$@"
