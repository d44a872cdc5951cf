# CTest tuning_tables_checked: cmake/tuning.cmake reads the tuned tables and the cost model's
# rows into the library at configure time, so a row it misreads or skips changes what `auto`
# runs with nothing said.  Run as
#   cmake -DSOURCE=<project root> -DWORK=<scratch folder> -P check_tables.cmake
# it runs tuning.cmake (cmake -P) on the project's own tables, which must pass, and on copies
# of them with one row broken each way, each of which must stop the configure with an error
# that names the file and the line.
cmake_minimum_required(VERSION 3.18)
if(NOT SOURCE OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DSOURCE=<project root> -DWORK=<scratch folder> -P check_tables.cmake")
endif()

set(failures 0)
set(tab "\t")

# A project tree under WORK/<name>: the real tables and rung list, then `edits`, pairs of
# file name (under tuning/) and a line appended to it, with <lb>, <rb> and <semicolon> for the
# characters a CMake list cannot carry; runs tuning.cmake on it.
function(tg_run_tables name result_var output_var)
  set(root ${WORK}/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/tuning ${root}/src/cuda ${root}/build)
  file(GLOB tables ${SOURCE}/tuning/*.tsv)
  file(COPY ${tables} DESTINATION ${root}/tuning)
  file(COPY ${SOURCE}/src/cuda/rungs.def DESTINATION ${root}/src/cuda)
  set(edits ${ARGN})
  list(LENGTH edits count)
  set(i 0)
  while(i LESS count)
    list(GET edits ${i} file)
    math(EXPR j "${i} + 1")
    list(GET edits ${j} line)
    string(REPLACE "<lb>" "[" line "${line}")
    string(REPLACE "<rb>" "]" line "${line}")
    string(REPLACE "<semicolon>" ";" line "${line}")
    file(APPEND ${root}/tuning/${file} "${line}\n")
    math(EXPR i "${i} + 2")
  endwhile()
  execute_process(COMMAND ${CMAKE_COMMAND} -DPROJECT_SOURCE_DIR=${root}
                          -DTG_GENERATED_DIR=${root}/build/generated
                          -P ${SOURCE}/cmake/tuning.cmake
                  WORKING_DIRECTORY ${root}/build
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${result_var} ${result} PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

# The case must fail naming <file>:<line>, the line of the nth row appended to file (1: the
# first).
function(tg_expect_refused name file nth)
  file(READ ${SOURCE}/tuning/${file} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines line)
  math(EXPR line "${line} + ${nth}")
  tg_run_tables(${name} result output ${ARGN})
  if(result EQUAL 0)
    message("FAIL ${name}: the configure accepted it")
    math(EXPR failures "${failures} + 1")
  elseif(NOT output MATCHES "${file}:${line}:")
    message("FAIL ${name}: the error does not name ${file}:${line}:\n${output}")
    math(EXPR failures "${failures} + 1")
  else()
    message("ok   ${name}: refused")
  endif()
  set(failures ${failures} PARENT_SCOPE)
endfunction()

tg_run_tables(project_tables result output)
if(NOT result EQUAL 0)
  message("FAIL project_tables: the project's own tables are refused:\n${output}")
  math(EXPR failures "${failures} + 1")
else()
  message("ok   project_tables: accepted")
endif()

set(model model_sm_90.tsv)
set(tuned sm_90.tsv)
set(correction model_sm_90_correction.tsv)
# A measured-correction row: a misspelled rung, a coefficient too few, a word for a number, a
# second row of the same key, a row for a rung orientation with no formula row to correct.
set(coefs "")
foreach(i RANGE 11)
  string(APPEND coefs "${tab}-0.01")
endforeach()
tg_expect_refused(correction_misspelled_rung ${correction} 1
  ${correction} "correction${tab}90${tab}ffma128x12${tab}0${tab}0${coefs}")
tg_expect_refused(correction_field_missing ${correction} 1
  ${correction} "correction${tab}90${tab}gemv8${tab}0${tab}0${tab}1")
tg_expect_refused(correction_not_a_number ${correction} 1
  ${correction} "correction${tab}90${tab}gemv8${tab}0${tab}0${tab}x${coefs}")
tg_expect_refused(correction_duplicate_row ${correction} 1
  ${correction} "correction${tab}90${tab}gemv8${tab}0${tab}0${coefs}")
tg_expect_refused(correction_without_rung_row ${correction} 1
  ${correction} "correction${tab}80${tab}gemv8${tab}0${tab}0${coefs}")
# A cost-model row: a misspelled rung, a field too many or too few, a word for a number, an
# orientation flag that is not 0 or 1, the same row twice, a rung for a GPU with no device row,
# a rung with a missing orientation, a field list broken by CMake's list characters.
tg_expect_refused(model_misspelled_rung ${model} 1
  ${model} "rung${tab}90${tab}ffma128x12${tab}0${tab}0${tab}1${tab}16${tab}2.3${tab}1.5${tab}595")
tg_expect_refused(model_extra_field ${model} 1
  ${model} "rung${tab}90${tab}gemv8${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990${tab}2990${tab}1")
tg_expect_refused(model_not_a_number ${model} 1
  ${model} "device${tab}80${tab}fast${tab}2000")
tg_expect_refused(model_bad_orientation ${model} 5
  ${model} "device${tab}80${tab}5.8${tab}2000"
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}1${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}1${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}1${tab}2${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990")
tg_expect_refused(model_duplicate_row ${model} 1
  ${model} "rung${tab}90${tab}gemv8${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990")
tg_expect_refused(model_duplicate_device ${model} 1
  ${model} "device${tab}90${tab}5.8${tab}2990")
tg_expect_refused(model_no_device_row ${model} 1
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}1${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}1${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}1${tab}1${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990")
tg_expect_refused(model_missing_orientation ${model} 2
  ${model} "device${tab}80${tab}5.8${tab}2000"
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}0${tab}1${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}80${tab}gemv8${tab}1${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990")
tg_expect_refused(model_list_characters ${model} 1
  ${model} "rung${tab}90${tab}gemv8<lb>${tab}0${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}90${tab}gemv8<rb>${tab}0${tab}1${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990"
  ${model} "rung${tab}90${tab}gemv8<semicolon>1${tab}0${tab}2${tab}32${tab}0.79${tab}0.25${tab}2990")
# A tuned row: the older layout (tflops right after split_k, no math), a misspelled rung or
# math mode, a row too short, a word for a count, the same call twice.
tg_expect_refused(tuned_older_layout ${tuned} 1
  ${tuned} "90${tab}100${tab}100${tab}100${tab}1${tab}1${tab}gemv8${tab}0${tab}1.5${tab}1.2")
tg_expect_refused(tuned_misspelled_rung ${tuned} 1
  ${tuned} "90${tab}100${tab}100${tab}100${tab}1${tab}1${tab}gemv9${tab}0${tab}fp32${tab}1.5${tab}1.2")
tg_expect_refused(tuned_misspelled_math ${tuned} 1
  ${tuned} "90${tab}100${tab}100${tab}100${tab}1${tab}1${tab}gemv8${tab}0${tab}fp64${tab}1.5${tab}1.2")
tg_expect_refused(tuned_short_row ${tuned} 1
  ${tuned} "90${tab}100${tab}100${tab}100${tab}1${tab}1${tab}gemv8${tab}0")
tg_expect_refused(tuned_not_a_count ${tuned} 1
  ${tuned} "90${tab}100${tab}1e3${tab}100${tab}1${tab}1${tab}gemv8${tab}0${tab}fp32${tab}1.5${tab}1.2")
tg_expect_refused(tuned_duplicate_call ${tuned} 1
  ${tuned} "90${tab}1024${tab}1024${tab}1024${tab}1${tab}1${tab}gemv8${tab}0${tab}fp32${tab}1.5${tab}1.2")

# The regret corpus's train rows (cmake/measured.cmake, read after tuning.cmake): a small
# corpus of the real file's first train row and a broken copy of it must stop at the copy's
# line, naming it; the same corpus unbroken passes.  (The whole corpus is the build's.)
function(tg_corpus_case name expect_refused bad_line)
  set(root ${WORK}/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/tuning ${root}/src/cuda ${root}/build)
  file(GLOB tables ${SOURCE}/tuning/sm_*.tsv ${SOURCE}/tuning/model_sm_*.tsv)
  file(COPY ${tables} DESTINATION ${root}/tuning)
  file(COPY ${SOURCE}/src/cuda/rungs.def DESTINATION ${root}/src/cuda)
  file(STRINGS ${SOURCE}/tuning/regret_corpus_sm_90.tsv train REGEX "^train\t" LIMIT_COUNT 1)
  file(WRITE ${root}/tuning/regret_corpus_sm_90.tsv
       "# a corpus of one row, timed on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n${train}\n")
  if(bad_line)
    file(APPEND ${root}/tuning/regret_corpus_sm_90.tsv "${bad_line}\n")
  endif()
  file(WRITE ${root}/both.cmake "include(${SOURCE}/cmake/tuning.cmake)\ninclude(${SOURCE}/cmake/measured.cmake)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -DPROJECT_SOURCE_DIR=${root}
                          -DTG_GENERATED_DIR=${root}/build/generated -P ${root}/both.cmake
                  WORKING_DIRECTORY ${root}/build
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_refused AND (result EQUAL 0 OR NOT "${out}${err}" MATCHES "regret_corpus_sm_90.tsv:3:"))
    message("FAIL ${name}: not refused at regret_corpus_sm_90.tsv:3:\n${out}${err}")
    math(EXPR failures "${failures} + 1")
  elseif(NOT expect_refused AND NOT result EQUAL 0)
    message("FAIL ${name}: the corpus was refused:\n${out}${err}")
    math(EXPR failures "${failures} + 1")
  endif()
  set(failures ${failures} PARENT_SCOPE)
endfunction()
file(STRINGS ${SOURCE}/tuning/regret_corpus_sm_90.tsv first_train REGEX "^train\t" LIMIT_COUNT 1)
string(REGEX REPLACE "=([0-9.])" "=x\\1" bad_entry "${first_train}")
string(REPLACE "\tcol\t" "\tdiagonal\t" bad_layout "${first_train}")
string(REPLACE "\trow\t" "\tdiagonal\t" bad_layout "${bad_layout}")
tg_corpus_case(corpus_accepted 0 "")
tg_corpus_case(corpus_bad_entry 1 "${bad_entry}")
tg_corpus_case(corpus_bad_layout 1 "${bad_layout}")
tg_corpus_case(corpus_short_row 1 "train${tab}seed1${tab}row${tab}NN${tab}8${tab}8")

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} case(s) failed")
endif()
message("all cases passed")
