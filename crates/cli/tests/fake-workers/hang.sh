#!/bin/sh
# Reads its spec, says hello in words, then never speaks again.
cat > /dev/null
echo "loading..."
exec sleep 1000
