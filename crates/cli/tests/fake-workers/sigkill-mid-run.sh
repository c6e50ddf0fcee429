#!/bin/sh
# Becomes the real worker and is killed with SIGKILL after KILL_AFTER seconds.
( sleep "${KILL_AFTER:-3}"; kill -9 $$ ) &
exec "$REAL_WORKER" "$@"
