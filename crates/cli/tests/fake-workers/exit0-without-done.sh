#!/bin/sh
# Exits 0 after one protocol line, without done or error.
cat > /dev/null
echo '{"event":"first_step","since_process_start_s":0.5,"since_train_start_s":0.1,"t_ns":1}'
exit 0
