#!/bin/sh
# Prints a BOMB_MIB MiB line to stdout and another to stderr (each without a
# newline until its end), then becomes the real worker.
head -c "$((BOMB_MIB * 1048576))" /dev/zero | tr '\0' 'x'
echo
head -c "$((BOMB_MIB * 1048576))" /dev/zero | tr '\0' 'y' >&2
echo >&2
exec "$REAL_WORKER" "$@"
