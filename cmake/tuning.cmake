# Embeds the planner's data into the library: the tuned tables (tuning/sm_<cc>.tsv) and the
# cost model's rows (tuning/model_sm_<cc>*.tsv).  A row this file skipped or misread would
# change what `auto` runs with nothing said, so every row is checked and any malformed one
# stops the configure with an error naming its file and line.  Rung names are checked against
# the ladder's list, src/cuda/rungs.def.
#
# Runs in a configure (include from CMakeLists.txt) and in script mode, where
# tests/tuning/check_tables.cmake runs it on broken copies of the tables:
#   cmake -DPROJECT_SOURCE_DIR=<root> -DTG_GENERATED_DIR=<folder> -P cmake/tuning.cmake
# (script mode takes CMAKE_BINARY_DIR to be the current folder, hence TG_GENERATED_DIR).
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.18) # the project's policies (IN_LIST) in script mode too
endif()
if(NOT TG_GENERATED_DIR)
  set(TG_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
endif()

# --- One reader for both kinds of table -----------------------------------------------------
# Reads a tab-separated file: each line that is neither blank nor a comment (#) becomes a row,
# its fields in ${prefix}_<i> (a list) and its line number in ${prefix}_<i>_LINE, for i in
# 1..${prefix}_COUNT.  The characters that CMake lists treat specially would split or join
# fields (;) or lines ([ ]) unseen: they are kept as {semicolon}, {bracket} and {backslash},
# which no field check accepts, so such a row is an error like any other.
function(tg_read_tsv file prefix)
  file(READ ${file} text)
  string(REPLACE "\\" "{backslash}" text "${text}")
  string(REPLACE ";" "{semicolon}" text "${text}")
  string(REPLACE "[" "{bracket}" text "${text}")
  string(REPLACE "]" "{bracket}" text "${text}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  set(count 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "^[ \t]*$" OR line MATCHES "^#")
      continue()
    endif()
    math(EXPR count "${count} + 1")
    string(REPLACE "\t" ";" fields "${line}")
    set(${prefix}_${count} "${fields}" PARENT_SCOPE)
    set(${prefix}_${count}_LINE ${number} PARENT_SCOPE)
  endforeach()
  set(${prefix}_COUNT ${count} PARENT_SCOPE)
endfunction()

# Stops the configure at a row: "<file>:<line>: <why>: <the row, fields space-separated>".
function(tg_row_error file line why fields)
  string(REPLACE ";" " " row "${fields}")
  message(FATAL_ERROR "${file}:${line}: ${why}: ${row}")
endfunction()

# Every field of `fields` from index `first` on must match `pattern`; `what` names it.
function(tg_check_fields file line fields first pattern what)
  list(LENGTH fields count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${first} ${last})
    list(GET fields ${i} value)
    if(NOT value MATCHES "${pattern}")
      tg_row_error(${file} ${line} "field ${i} \"${value}\" is not ${what}" "${fields}")
    endif()
  endforeach()
endfunction()

set(tg_count_pattern "^[0-9]+$")
set(tg_number_pattern "^[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$")
set(tg_signed_pattern "^-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$")
set(tg_flag_pattern "^[01]$")

# The rung names a row may use: TG_RUNG(name) in the ladder's list.
set(TG_RUNG_LIST_FILE ${PROJECT_SOURCE_DIR}/src/cuda/rungs.def)
if(NOT EXISTS ${TG_RUNG_LIST_FILE})
  message(FATAL_ERROR "cmake/tuning.cmake checks the tables' rung names against "
                      "${TG_RUNG_LIST_FILE}, which is missing")
endif()
file(STRINGS ${TG_RUNG_LIST_FILE} tg_rung_lines REGEX "^TG_RUNG\\(")
set(TG_RUNG_NAMES "")
foreach(line IN LISTS tg_rung_lines)
  string(REGEX REPLACE "^TG_RUNG\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${line}")
  list(APPEND TG_RUNG_NAMES ${name})
endforeach()

function(tg_check_rung file line fields name)
  if(NOT name IN_LIST TG_RUNG_NAMES)
    tg_row_error(${file} ${line} "\"${name}\" is not a rung of src/cuda/rungs.def" "${fields}")
  endif()
endfunction()

# The globs follow new files in a configure; script mode has no configure to follow them.
if(CMAKE_SCRIPT_MODE_FILE)
  set(tg_glob_follow "")
else()
  set(tg_glob_follow CONFIGURE_DEPENDS)
endif()

# --- The tuned tables -------------------------------------------------------------------------
# tuning/sm_<cc>.tsv, written on a GPU by `tilegemm bench --tune` (bench/tuning_writer.c),
# into the array tg_tuning_table (src/plan/tuning.h).  Rows of exactly these 11 fields:
#   cc m n k a_k_contiguous b_n_contiguous algo split_k math tflops cublas_tflops
# math is the tg_math mode the row serves: fp32, strict or tf32.  No files: an empty table.
file(GLOB TG_TUNING_FILES ${tg_glob_follow} ${PROJECT_SOURCE_DIR}/tuning/sm_*.tsv)
set(TG_TUNING_ROWS "")
set(TG_TUNING_COUNT 0)
set(tg_tuned_keys "")
foreach(tuning_file IN LISTS TG_TUNING_FILES)
  get_filename_component(name ${tuning_file} NAME)
  set(where tuning/${name})
  tg_read_tsv(${tuning_file} row)
  foreach(r RANGE 1 ${row_COUNT})
    if(row_COUNT EQUAL 0)
      break()
    endif()
    set(fields "${row_${r}}")
    set(line ${row_${r}_LINE})
    list(LENGTH fields field_count)
    if(NOT field_count EQUAL 11)
      set(why "a row has 11 tab-separated fields (cc m n k a_k_contiguous b_n_contiguous algo")
      string(APPEND why " split_k math tflops cublas_tflops), not ${field_count}")
      tg_row_error(${where} ${line} "${why}" "${fields}")
    endif()
    list(GET fields 0 cc)
    list(GET fields 1 m)
    list(GET fields 2 n)
    list(GET fields 3 k)
    list(GET fields 4 a_k)
    list(GET fields 5 b_n)
    list(GET fields 6 algo)
    list(GET fields 7 split)
    list(GET fields 8 math_name)
    list(GET fields 9 tflops)
    foreach(i IN ITEMS 0 1 2 3 7)
      list(GET fields ${i} value)
      if(NOT value MATCHES "${tg_count_pattern}")
        tg_row_error(${where} ${line} "field ${i} \"${value}\" is not a count" "${fields}")
      endif()
    endforeach()
    tg_check_fields(${where} ${line} "${fields}" 9 "${tg_number_pattern}" "a number")
    foreach(flag IN ITEMS ${a_k} ${b_n})
      if(NOT flag MATCHES "${tg_flag_pattern}")
        tg_row_error(${where} ${line} "an orientation flag is 0 or 1, not \"${flag}\"" "${fields}")
      endif()
    endforeach()
    tg_check_rung(${where} ${line} "${fields}" "${algo}")
    if(math_name STREQUAL "fp32")
      set(math 0)
    elseif(math_name STREQUAL "strict")
      set(math 1)
    elseif(math_name STREQUAL "tf32")
      set(math 2)
    else()
      tg_row_error(${where} ${line} "math \"${math_name}\" is not fp32, strict or tf32" "${fields}")
    endif()
    # One row per call: the lookup takes the first, so a second would be dead and misleading.
    set(key "${cc}/${m}/${n}/${k}/${a_k}/${b_n}/${math}")
    if(key IN_LIST tg_tuned_keys)
      set(why "a second row for the same call (cc, shape, orientation and math)")
      tg_row_error(${where} ${line} "${why}" "${fields}")
    endif()
    list(APPEND tg_tuned_keys "${key}")
    string(APPEND TG_TUNING_ROWS
           "    {${cc}, ${m}, ${n}, ${k}, ${a_k}, ${b_n}, \"${algo}\", ${split}, ${math}, ${tflops}},\n")
    math(EXPR TG_TUNING_COUNT "${TG_TUNING_COUNT} + 1")
  endforeach()
endforeach()
list(LENGTH TG_TUNING_FILES tuning_file_count)
message(STATUS "tilegemm: ${TG_TUNING_COUNT} tuned rows from ${tuning_file_count} file(s) in tuning/")
set(TG_TUNING_SOURCE ${TG_GENERATED_DIR}/tuning_table.c)
file(CONFIGURE OUTPUT ${TG_TUNING_SOURCE} CONTENT [[
/* Generated by cmake/tuning.cmake from the tuning table files: do not edit. */
#include "plan/tuning.h"

const tg_tuned tg_tuning_table[] = {
@TG_TUNING_ROWS@    {0, 0, 0, 0, 0, 0, "", 0, 0, 0} /* end */
};
const int tg_tuning_count = @TG_TUNING_COUNT@;
]] @ONLY)

# --- The cost model ---------------------------------------------------------------------------
# The key of a rung or correction row: a rung of the list, a compute capability, two flags.
function(tg_check_model_key file line fields cc algo a_k b_n)
  tg_check_rung(${file} ${line} "${fields}" "${algo}")
  if(NOT cc MATCHES "${tg_count_pattern}")
    tg_row_error(${file} ${line} "\"${cc}\" is not a compute capability" "${fields}")
  endif()
  foreach(flag IN ITEMS ${a_k} ${b_n})
    if(NOT flag MATCHES "${tg_flag_pattern}")
      tg_row_error(${file} ${line} "an orientation flag is 0 or 1, not \"${flag}\"" "${fields}")
    endif()
  endforeach()
endfunction()

# tuning/model_sm_<cc>*.tsv, fitted by bench/fit_model.py from a sweep, into tg_model_devices
# and tg_model_rungs (src/plan/cost_model.h).  Tab-separated rows:
#   device cc launch_us dram_gbs
#   rung   cc algo a_k_contiguous b_n_contiguous occupancy bk wave_us kstep_us c_gbs [c_wide_gbs]
#   correction cc algo a_k_contiguous b_n_contiguous c0 ... c11
# One device row per compute capability, and for every rung of a compute capability a row for
# each of the four orientations (a_k_contiguous, b_n_contiguous): the planner has no fallback
# for a missing one but to pass the rung over.  A correction row (bench/fit_correction.py, the
# measured correction of cost_model.h) belongs to a rung row of the same key; a rung row
# without one is the formula alone.  A rung row without c_wide_gbs writes C at c_gbs in either
# alignment class (the stream rungs' rows).
file(GLOB TG_MODEL_FILES ${tg_glob_follow} ${PROJECT_SOURCE_DIR}/tuning/model_sm_*.tsv)
set(TG_MODEL_DEVICE_ROWS "")
set(TG_MODEL_RUNG_ROWS "")
set(TG_MODEL_DEVICE_COUNT 0)
set(TG_MODEL_RUNG_COUNT 0)
set(tg_model_devices "")   # compute capabilities with a device row
set(tg_model_rungs "")     # cc/algo of every rung with a row
set(tg_model_keys "")      # cc/algo/a_k/b_n of every rung row
set(TG_MODEL_CORRECTION_ROWS "")
set(TG_MODEL_CORRECTION_COUNT 0)
set(tg_correction_keys "") # cc/algo/a_k/b_n of every correction row, and where it is
foreach(model_file IN LISTS TG_MODEL_FILES)
  get_filename_component(name ${model_file} NAME)
  set(where tuning/${name})
  tg_read_tsv(${model_file} row)
  foreach(r RANGE 1 ${row_COUNT})
    if(row_COUNT EQUAL 0)
      break()
    endif()
    set(fields "${row_${r}}")
    set(line ${row_${r}_LINE})
    list(LENGTH fields field_count)
    list(GET fields 0 kind)
    if(kind STREQUAL "device" AND field_count EQUAL 4)
      list(GET fields 1 cc)
      list(GET fields 2 launch)
      list(GET fields 3 gbs)
      tg_check_fields(${where} ${line} "${fields}" 1 "${tg_number_pattern}" "a number")
      if(NOT cc MATCHES "${tg_count_pattern}")
        tg_row_error(${where} ${line} "\"${cc}\" is not a compute capability" "${fields}")
      endif()
      if(cc IN_LIST tg_model_devices)
        tg_row_error(${where} ${line} "a second device row for sm_${cc}" "${fields}")
      endif()
      list(APPEND tg_model_devices ${cc})
      set(tg_model_device_at_${cc} "${where}:${line}")
      string(APPEND TG_MODEL_DEVICE_ROWS "    {${cc}, ${launch}, ${gbs}},\n")
      math(EXPR TG_MODEL_DEVICE_COUNT "${TG_MODEL_DEVICE_COUNT} + 1")
    elseif(kind STREQUAL "rung" AND (field_count EQUAL 10 OR field_count EQUAL 11))
      list(GET fields 1 cc)
      list(GET fields 2 algo)
      list(GET fields 3 a_k)
      list(GET fields 4 b_n)
      list(GET fields 5 occupancy)
      list(GET fields 6 bk)
      list(GET fields 7 wave)
      list(GET fields 8 kstep)
      list(GET fields 9 c_gbs)
      set(c_wide_gbs ${c_gbs})
      if(field_count EQUAL 11)
        list(GET fields 10 c_wide_gbs)
      endif()
      tg_check_model_key(${where} ${line} "${fields}" ${cc} ${algo} ${a_k} ${b_n})
      tg_check_fields(${where} ${line} "${fields}" 5 "${tg_number_pattern}" "a number")
      set(key "${cc}/${algo}/${a_k}/${b_n}")
      if(key IN_LIST tg_model_keys)
        tg_row_error(${where} ${line} "a second row for ${algo} on sm_${cc} in this orientation"
                     "${fields}")
      endif()
      list(APPEND tg_model_keys "${key}")
      if(NOT "${cc}/${algo}" IN_LIST tg_model_rungs)
        list(APPEND tg_model_rungs "${cc}/${algo}")
        set(tg_model_rung_at_${cc}_${algo} "${where}:${line}")
      endif()
      string(APPEND TG_MODEL_RUNG_ROWS
             "    {${cc}, \"${algo}\", ${a_k}, ${b_n}, ${occupancy}, ${bk}, ${wave}, ${kstep}, ${c_gbs}, ${c_wide_gbs}},\n")
      math(EXPR TG_MODEL_RUNG_COUNT "${TG_MODEL_RUNG_COUNT} + 1")
    elseif(kind STREQUAL "correction" AND field_count EQUAL 17)
      list(GET fields 1 cc)
      list(GET fields 2 algo)
      list(GET fields 3 a_k)
      list(GET fields 4 b_n)
      tg_check_model_key(${where} ${line} "${fields}" ${cc} ${algo} ${a_k} ${b_n})
      tg_check_fields(${where} ${line} "${fields}" 5 "${tg_signed_pattern}" "a number")
      set(key "${cc}/${algo}/${a_k}/${b_n}")
      if(key IN_LIST tg_correction_keys)
        tg_row_error(${where} ${line} "a second correction for ${algo} on sm_${cc} in this "
                     "orientation" "${fields}")
      endif()
      list(APPEND tg_correction_keys "${key}")
      set(tg_correction_at_${cc}_${algo}_${a_k}_${b_n} "${where}:${line}")
      list(SUBLIST fields 5 12 coef)
      string(REPLACE ";" ", " coef "${coef}")
      string(APPEND TG_MODEL_CORRECTION_ROWS
             "    {${cc}, \"${algo}\", ${a_k}, ${b_n}, {${coef}}},\n")
      math(EXPR TG_MODEL_CORRECTION_COUNT "${TG_MODEL_CORRECTION_COUNT} + 1")
    else()
      tg_row_error(${where} ${line} "not a device row (4 fields), a rung row (10 or 11) or a "
                   "correction row (17)" "${fields}")
    endif()
  endforeach()
endforeach()
# Rows no single line shows missing: named at the first row of the rung they belong to.
foreach(rung IN LISTS tg_model_rungs)
  string(REPLACE "/" ";" parts "${rung}")
  list(GET parts 0 cc)
  list(GET parts 1 algo)
  set(at "${tg_model_rung_at_${cc}_${algo}}")
  if(NOT cc IN_LIST tg_model_devices)
    message(FATAL_ERROR "${at}: ${algo} has rows for sm_${cc}, which has no device row")
  endif()
  set(missing "")
  foreach(orientation IN ITEMS 0/0 0/1 1/0 1/1)
    if(NOT "${cc}/${algo}/${orientation}" IN_LIST tg_model_keys)
      list(APPEND missing "${orientation}")
    endif()
  endforeach()
  if(missing)
    string(REPLACE ";" ", " missing "${missing}")
    message(FATAL_ERROR "${at}: ${algo} on sm_${cc} has no row for a_k_contiguous/"
                        "b_n_contiguous ${missing}: every orientation needs one")
  endif()
endforeach()
foreach(key IN LISTS tg_correction_keys)
  if(NOT key IN_LIST tg_model_keys)
    string(REPLACE "/" "_" at "${key}")
    string(REPLACE "/" " " named "${key}")
    message(FATAL_ERROR "${tg_correction_at_${at}}: a correction for ${named} (cc algo a_k b_n), "
                        "which has no rung row to correct")
  endif()
endforeach()
message(STATUS "tilegemm: cost model with ${TG_MODEL_RUNG_COUNT} rung rows (${TG_MODEL_CORRECTION_COUNT} corrected) for ${TG_MODEL_DEVICE_COUNT} GPU(s)")
set(TG_MODEL_SOURCE ${TG_GENERATED_DIR}/model_table.c)
file(CONFIGURE OUTPUT ${TG_MODEL_SOURCE} CONTENT [[
/* Generated by cmake/tuning.cmake from tuning/model_sm_*.tsv: do not edit. */
#include "plan/cost_model.h"

const tg_model_device tg_model_devices[] = {
@TG_MODEL_DEVICE_ROWS@    {0, 0, 0} /* end */
};
const int tg_model_device_count = @TG_MODEL_DEVICE_COUNT@;
const tg_model_rung tg_model_rungs[] = {
@TG_MODEL_RUNG_ROWS@    {0, "", 0, 0, 0, 0, 0, 0, 0, 0} /* end */
};
const int tg_model_rung_count = @TG_MODEL_RUNG_COUNT@;
const tg_model_correction tg_model_corrections[] = {
@TG_MODEL_CORRECTION_ROWS@    {0, "", 0, 0, {0}} /* end */
};
const int tg_model_correction_count = @TG_MODEL_CORRECTION_COUNT@;
]] @ONLY)

# A table or model file rewritten (by `bench --tune` or bench/fit_model.py), or a rung added
# to the list, re-runs this script at the next build, so the library never embeds stale rows.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${TG_TUNING_FILES} ${TG_MODEL_FILES} ${TG_RUNG_LIST_FILE})
endif()
