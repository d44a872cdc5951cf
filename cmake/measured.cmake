# Embeds the train half of the regret corpus (tuning/regret_corpus_sm_<cc>.tsv, written by
# bench/corpus.py from device runs) into the library as tg_measured_calls and
# tg_measured_entries (src/plan/measured.h): the planner ranks rungs by how they fared on the
# timed calls nearest a new one.  Held-out rows are never embedded: plan_regret judges the
# planner on them.  A malformed row stops the configuration, naming the file and line.
# A card's own file, tuning/regret_corpus_sm_<cc>_<card>.tsv (bench/corpus.py --card), holds
# cases of the first re-timed on the one card its header names: that card plans from them in
# place of the first file's rows of the same cases (tg_measured_cards: the names a GPU's must
# equal); any other GPU never reads them.
file(GLOB TG_CORPUS_FILES ${tg_glob_follow} ${PROJECT_SOURCE_DIR}/tuning/regret_corpus_sm_*.tsv)
set(TG_MEASURED_CALLS "")
set(TG_MEASURED_ENTRIES "")
set(TG_MEASURED_CARDS "")
set(TG_MEASURED_CALL_COUNT 0)
set(TG_MEASURED_ENTRY_COUNT 0)
set(TG_MEASURED_CARD_COUNT 1) # 0: the cc's own file, whatever the card
set(TG_CARD_CORPORA "") # the cards' own files and, in the same order, their GPUs' names
set(TG_CARD_NAMES "")    # (tests/CMakeLists.txt's plan_regret_<card>)
foreach(corpus_file IN LISTS TG_CORPUS_FILES)
  get_filename_component(name ${corpus_file} NAME)
  set(where tuning/${name})
  if(NOT name MATCHES "^regret_corpus_sm_([0-9]+)(_[a-z0-9]+)?\\.tsv$")
    message(FATAL_ERROR "${where}: not regret_corpus_sm_<cc>.tsv or regret_corpus_sm_<cc>_<card>.tsv")
  endif()
  set(cc ${CMAKE_MATCH_1})
  set(card 0)
  # The SMs of the GPU its calls were timed on, from the first header line naming them
  # ("NVIDIA H200 (sm_90, 132 SMs)"): the planner predicts each call as that GPU would run it.
  file(STRINGS ${corpus_file} header REGEX "^#.*\\(sm_[0-9]+, [0-9]+ SMs\\)" LIMIT_COUNT 1)
  if(NOT header MATCHES "^#[ ]+([^(]*[^ (]) \\(sm_[0-9]+, ([0-9]+) SMs\\)")
    message(FATAL_ERROR "${where}: no header line names the GPU's SMs (\"NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\")")
  endif()
  set(card_name "${CMAKE_MATCH_1}")
  set(sms ${CMAKE_MATCH_2})
  if(name MATCHES "_sm_[0-9]+_[a-z0-9]+\\.tsv$")
    set(card ${TG_MEASURED_CARD_COUNT})
    string(APPEND TG_MEASURED_CARDS "    \"${card_name}\",\n")
    list(APPEND TG_CARD_CORPORA ${corpus_file})
    list(APPEND TG_CARD_NAMES "${card_name}")
    math(EXPR TG_MEASURED_CARD_COUNT "${TG_MEASURED_CARD_COUNT} + 1")
  endif()
  tg_read_tsv(${corpus_file} row) # cmake/tuning.cmake
  foreach(r RANGE 1 ${row_COUNT})
    if(row_COUNT EQUAL 0)
      break()
    endif()
    set(fields "${row_${r}}")
    set(line ${row_${r}_LINE})
    list(LENGTH fields field_count)
    if(NOT field_count EQUAL 10)
      tg_row_error(${where} ${line} "a corpus row has 10 fields (bench/corpus.py)" "${fields}")
    endif()
    list(GET fields 0 set)
    if(NOT set STREQUAL "train")
      continue() # held-out rows are plan_regret's alone
    endif()
    list(GET fields 2 layout_name)
    list(GET fields 3 trans)
    list(SUBLIST fields 4 3 shape)
    list(GET fields 9 entries)
    if(NOT layout_name MATCHES "^(row|col)$" OR NOT trans MATCHES "^[NT][NT]$")
      tg_row_error(${where} ${line} "layout row or col, transposes NN, NT, TN or TT" "${fields}")
    endif()
    tg_check_fields(${where} ${line} "${shape}" 0 "${tg_count_pattern}" "a count (m, n, k)")
    set(layout TG_ROW_MAJOR)
    if(layout_name STREQUAL "col")
      set(layout TG_COL_MAJOR)
    endif()
    set(ta TG_NO_TRANS)
    if(trans MATCHES "^T")
      set(ta TG_TRANS)
    endif()
    set(tb TG_NO_TRANS)
    if(trans MATCHES "T$")
      set(tb TG_TRANS)
    endif()
    string(REPLACE ";" ", " shape "${shape}")
    string(REGEX MATCHALL "[^ ]+" items "${entries}")
    set(first ${TG_MEASURED_ENTRY_COUNT})
    foreach(item IN LISTS items)
      # rung@S=ms: the time at S slices, a count between the powers of two (bench/corpus.py)
      if(item MATCHES "^([A-Za-z0-9_]+)@([3567])=(([0-9.]+([eE][-+]?[0-9]+)?)~?)$")
        string(APPEND TG_MEASURED_ENTRIES
               "    {\"${CMAKE_MATCH_1}\", ${CMAKE_MATCH_2}, ${CMAKE_MATCH_4}},\n")
        math(EXPR TG_MEASURED_ENTRY_COUNT "${TG_MEASURED_ENTRY_COUNT} + 1")
        continue()
      endif()
      # rung=ms,ms,...: the times at 1, 2, 4, ... slices, empty where not timed (bench/corpus.py)
      if(NOT item MATCHES "^([A-Za-z0-9_]+)=([0-9.eE+~,-]+)$")
        tg_row_error(${where} ${line} "\"${item}\" is not rung=ms,ms,..." "${fields}")
      endif()
      set(rung ${CMAKE_MATCH_1})
      set(rest "${CMAKE_MATCH_2},") # a comma after each time; no lists: they drop empty items
      set(slices 1)
      while(NOT rest STREQUAL "")
        string(REGEX MATCH "^([^,]*),(.*)$" ignored "${rest}")
        set(ms "${CMAKE_MATCH_1}")
        set(rest "${CMAKE_MATCH_2}")
        if(NOT ms STREQUAL "")
          if(NOT ms MATCHES "^([0-9.]+([eE][-+]?[0-9]+)?)~?$")
            tg_row_error(${where} ${line} "\"${item}\" is not rung=ms,ms,..." "${fields}")
          endif()
          string(APPEND TG_MEASURED_ENTRIES "    {\"${rung}\", ${slices}, ${CMAKE_MATCH_1}},\n")
          math(EXPR TG_MEASURED_ENTRY_COUNT "${TG_MEASURED_ENTRY_COUNT} + 1")
        endif()
        math(EXPR slices "${slices} * 2")
      endwhile()
    endforeach()
    math(EXPR count "${TG_MEASURED_ENTRY_COUNT} - ${first}")
    string(APPEND TG_MEASURED_CALLS "    {${cc}, ${sms}, ${card}, ${layout}, ${ta}, ${tb}, ${shape}, ${first}, ${count}},\n")
    math(EXPR TG_MEASURED_CALL_COUNT "${TG_MEASURED_CALL_COUNT} + 1")
  endforeach()
endforeach()
message(STATUS "tilegemm: ${TG_MEASURED_CALL_COUNT} measured calls (${TG_MEASURED_ENTRY_COUNT} entries) from the regret corpus in tuning/")
set(TG_MEASURED_SOURCE ${TG_GENERATED_DIR}/measured_table.c) # TG_GENERATED_DIR: tuning.cmake
file(CONFIGURE OUTPUT ${TG_MEASURED_SOURCE} CONTENT [[
/* Generated by cmake/measured.cmake from tuning/regret_corpus_sm_*.tsv: do not edit. */
#include "plan/measured.h"

const tg_measured_call tg_measured_calls[] = {
@TG_MEASURED_CALLS@    {0, 0, 0, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 0, 0, 0, 0, 0} /* end */
};
const int tg_measured_call_count = @TG_MEASURED_CALL_COUNT@;
const char *const tg_measured_cards[] = {
    "", /* the cc's own file */
@TG_MEASURED_CARDS@};
const int tg_measured_card_count = @TG_MEASURED_CARD_COUNT@;
const tg_measured_entry tg_measured_entries[] = {
@TG_MEASURED_ENTRIES@    {"", 0, 0.0f} /* end */
};
]] @ONLY)

# A corpus rewritten (bench/corpus.py) re-runs this script at the next build, so the planner
# never ranks by stale times.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${TG_CORPUS_FILES})
endif()
