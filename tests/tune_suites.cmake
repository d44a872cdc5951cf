# `tilegemm tune --list` and `tilegemm bench --list` name the same cases (shape, transposes,
# layout, in order) for a suite: tune fills the cache for what the benchmark times.
#   cmake -DEXE=path/to/tilegemm -DSUITE=all -P tune_suites.cmake
execute_process(COMMAND ${EXE} tune --list --suite ${SUITE} --count 40 --seed 20261201
                OUTPUT_VARIABLE tune RESULT_VARIABLE tune_status)
execute_process(COMMAND ${EXE} bench --list --suite ${SUITE} --count 40 --seed 20261201
                OUTPUT_VARIABLE bench RESULT_VARIABLE bench_status)
if(NOT tune_status EQUAL 0 OR NOT bench_status EQUAL 0)
  message(FATAL_ERROR "tune --list: ${tune_status}, bench --list: ${bench_status}")
endif()
string(REGEX MATCHALL "[0-9]+x[0-9]+x[0-9]+ +[NT][NT] (row|col)" tune_cases "${tune}")
string(REGEX MATCHALL "[0-9]+x[0-9]+x[0-9]+ +[NT][NT] (row|col)" bench_cases "${bench}")
set(normalized_bench "")
foreach(c IN LISTS bench_cases)
  string(REGEX REPLACE " +" " " c "${c}")
  list(APPEND normalized_bench "${c}")
endforeach()
list(LENGTH tune_cases n)
if(n EQUAL 0 OR NOT "${tune_cases}" STREQUAL "${normalized_bench}")
  message(FATAL_ERROR "tune and bench name different cases for --suite ${SUITE}:\n"
                      "tune:  ${tune_cases}\nbench: ${normalized_bench}")
endif()
message(STATUS "${n} cases, the same in tune and bench")
