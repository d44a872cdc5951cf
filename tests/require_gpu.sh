#!/usr/bin/env bash
# Runs a test command whose GPU cases skip where there is no GPU (pytest: "N skipped"), and
# with TILEGEMM_REQUIRE_GPU=1 turns "everything skipped" into a failure, as tg_test_need_gpu
# does for the C tests.
#
#   require_gpu.sh COMMAND...
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -eq 0 ] && [ -n "${TILEGEMM_REQUIRE_GPU:-}" ] && [ "$TILEGEMM_REQUIRE_GPU" != 0 ] &&
    printf '%s\n' "$out" | grep -Eq '(^|[^0-9])[0-9]+ skipped' &&
    ! printf '%s\n' "$out" | grep -Eq '[0-9]+ passed'; then
    echo "require_gpu: TILEGEMM_REQUIRE_GPU is set but every GPU case was skipped"
    exit 1
fi
exit "$status"
