# Writes OUT, a CMake file setting tg_listed_rungs to the rungs that EXE --list names
# (tg_test_per_rung in tests/CMakeLists.txt makes a CTest case of each).  Run after each build
# of the test:
#   cmake -DEXE=<test program> -DOUT=<file> -P list_rungs.cmake
execute_process(COMMAND "${EXE}" --list OUTPUT_VARIABLE rungs RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR rungs STREQUAL "")
  message(FATAL_ERROR "${EXE} --list failed (${status})")
endif()
string(STRIP "${rungs}" rungs)
string(REPLACE "\n" ";" rungs "${rungs}")
get_filename_component(exe_name "${EXE}" NAME)
set(text "# Written by list_rungs.cmake after each build of ${exe_name}.\n")
string(APPEND text "set(tg_listed_rungs")
foreach(rung IN LISTS rungs)
  string(APPEND text " [==[${rung}]==]")
endforeach()
file(WRITE "${OUT}" "${text})\n")
