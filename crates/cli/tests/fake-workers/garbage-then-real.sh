#!/bin/sh
# Prints lines that are not protocol events, then becomes the real worker.
echo "warming up the flux capacitor"
echo '{"event": "not-an-event"'
printf '\377\376 invalid utf-8\n'
exec "$REAL_WORKER" "$@"
