# Which GPU code the build makes (included by CMakeLists.txt after enable_language(CUDA)).
#
#   TG_CUDA_ARCH empty (default)  the GPU visible now (nvidia-smi), when there is one: a native
#                                 build, sm_90a on Hopper (wgmma needs the "a" code); otherwise
#                                 the portable list
#   TG_CUDA_ARCH=all              the portable list: code for every GPU from the Turing
#                                 generation on (Volta with CUDA 12 and older), sm_90a for
#                                 Hopper and PTX for later GPUs; for packagers
#   TG_CUDA_ARCH=native           the GPU visible now, an error where there is none
#   TG_CUDA_ARCH=<list>           as CMAKE_CUDA_ARCHITECTURES takes it, e.g. 90a or 80;90a
#
# Sets CMAKE_CUDA_ARCHITECTURES, TG_CUDA_CODE (the code in nvcc's words, e.g. "sm_90a") and
# TG_CUDA_DESCRIPTION (the code and why, e.g. "built natively for sm_90a, ..."), which
# tg_gpu_code() and `tilegemm info` report.

# The CMake architecture of a compute capability ("9.0" -> 90a: wgmma exists only in sm_90a).
function(tg_arch_of_cc cc out)
  string(REPLACE "." "" arch "${cc}")
  if(arch STREQUAL "90")
    set(arch 90a)
  endif()
  set(${out} ${arch} PARENT_SCOPE)
endfunction()

# The architectures of the GPUs nvidia-smi sees (empty when it sees none or is absent), and
# their names.
function(tg_visible_gpus out_archs out_names)
  set(archs)
  set(names)
  find_program(TG_NVIDIA_SMI nvidia-smi)
  if(TG_NVIDIA_SMI)
    execute_process(COMMAND ${TG_NVIDIA_SMI} --query-gpu=compute_cap,name --format=csv,noheader
                    OUTPUT_VARIABLE text RESULT_VARIABLE status ERROR_QUIET TIMEOUT 30)
    if(status EQUAL 0)
      string(REGEX MATCHALL "[^\n]+" lines "${text}")
      foreach(line IN LISTS lines)
        if(line MATCHES "^ *([0-9]+\\.[0-9]+) *, *(.*[^ ]) *$")
          tg_arch_of_cc(${CMAKE_MATCH_1} arch)
          list(APPEND archs ${arch})
          list(APPEND names "${CMAKE_MATCH_2}")
        endif()
      endforeach()
    endif()
  endif()
  list(REMOVE_DUPLICATES archs)
  list(REMOVE_DUPLICATES names)
  set(${out_archs} "${archs}" PARENT_SCOPE)
  set(${out_names} "${names}" PARENT_SCOPE)
endfunction()

# The code an architecture list makes, in nvcc's words: 75-real -> sm_75, 90-virtual -> PTX
# compute_90, 90a -> sm_90a + PTX compute_90a.
function(tg_describe_archs archs out)
  set(real)
  set(ptx)
  foreach(a IN LISTS archs)
    if(a MATCHES "^([0-9]+[a-z]?)-real$")
      list(APPEND real sm_${CMAKE_MATCH_1})
    elseif(a MATCHES "^([0-9]+[a-z]?)-virtual$")
      list(APPEND ptx compute_${CMAKE_MATCH_1})
    elseif(a MATCHES "^[0-9]+[a-z]?$")
      list(APPEND real sm_${a})
      list(APPEND ptx compute_${a})
    else()
      list(APPEND real ${a}) # all, all-major, native: CMake's own words
    endif()
  endforeach()
  string(REPLACE ";" " " text "${real}")
  if(ptx)
    string(REPLACE ";" " " ptx "${ptx}")
    set(text "${text}, PTX ${ptx}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 13.0)
  # CUDA 13 dropped code generation below compute capability 7.5.
  set(TG_PORTABLE_ARCHS 75-real 80-real 90a-real 90-virtual)
  set(tg_portable_min 7.5)
else()
  set(TG_PORTABLE_ARCHS 70-real 80-real 90a-real 90-virtual)
  set(tg_portable_min 7.0)
endif()
tg_describe_archs("${TG_PORTABLE_ARCHS}" tg_portable_text)

set(tg_found_archs)
if(NOT TG_CUDA_ARCH OR TG_CUDA_ARCH STREQUAL "native")
  tg_visible_gpus(tg_found_archs tg_found_names)
  # A GPU newer than this nvcc knows gets the portable list, whose PTX its driver compiles.
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-code OUTPUT_VARIABLE tg_nvcc_codes
                  RESULT_VARIABLE status ERROR_QUIET)
  foreach(a IN LISTS tg_found_archs)
    string(REGEX REPLACE "[a-z]$" "" base "${a}") # the list names sm_90 for sm_90a too
    if(status EQUAL 0 AND NOT tg_nvcc_codes MATCHES "(^|\n)sm_${base}(\r?\n|$)")
      message(STATUS "tilegemm: nvcc ${CMAKE_CUDA_COMPILER_VERSION} cannot make sm_${a} code for "
                     "the GPU found here")
      set(tg_found_archs)
      break()
    endif()
  endforeach()
  if(TG_CUDA_ARCH STREQUAL "native" AND NOT tg_found_archs)
    message(FATAL_ERROR "tilegemm: TG_CUDA_ARCH=native, but nvidia-smi shows no GPU this nvcc "
                        "can build for; use -DTG_CUDA_ARCH=all (portable) or a list, e.g. 90a")
  endif()
endif()

if(tg_found_archs)
  # Real code only: a native build runs on the GPU it was made for, and says so elsewhere.
  list(TRANSFORM tg_found_archs APPEND "-real" OUTPUT_VARIABLE CMAKE_CUDA_ARCHITECTURES)
  tg_describe_archs("${CMAKE_CUDA_ARCHITECTURES}" TG_CUDA_CODE)
  # One string, no semicolon: it becomes a -D of backend.cu.
  string(CONCAT TG_CUDA_DESCRIPTION "built natively for ${TG_CUDA_CODE}, the GPU found at "
                "configure time (-DTG_CUDA_ARCH=all builds for any GPU)")
  string(REPLACE ";" ", " tg_found_names "${tg_found_names}")
  message(STATUS "tilegemm: building GPU code for the GPU found here (${tg_found_names}): "
                 "${TG_CUDA_CODE}.  For a library that runs on any GPU (${tg_portable_text}), "
                 "configure with -DTG_CUDA_ARCH=all")
elseif(NOT TG_CUDA_ARCH OR TG_CUDA_ARCH STREQUAL "all")
  set(CMAKE_CUDA_ARCHITECTURES ${TG_PORTABLE_ARCHS})
  set(TG_CUDA_CODE "${tg_portable_text}")
  string(CONCAT TG_CUDA_DESCRIPTION "portable: ${TG_CUDA_CODE} (any GPU from compute "
                "capability ${tg_portable_min} on)")
  if(TG_CUDA_ARCH)
    message(STATUS "tilegemm: building portable GPU code (TG_CUDA_ARCH=all): ${TG_CUDA_CODE}")
  else()
    message(STATUS "tilegemm: no GPU visible (nvidia-smi): building portable GPU code, "
                   "${TG_CUDA_CODE}.  On a GPU machine the default is its GPU alone, a faster "
                   "build; -DTG_CUDA_ARCH=90a (for example) picks one here")
  endif()
else()
  set(CMAKE_CUDA_ARCHITECTURES ${TG_CUDA_ARCH})
  tg_describe_archs("${TG_CUDA_ARCH}" TG_CUDA_CODE)
  string(REPLACE ";" " " tg_arch_words "${TG_CUDA_ARCH}")
  set(TG_CUDA_DESCRIPTION "${TG_CUDA_CODE} (TG_CUDA_ARCH=${tg_arch_words})")
  message(STATUS "tilegemm: building GPU code for TG_CUDA_ARCH=${TG_CUDA_ARCH}: ${TG_CUDA_CODE}"
                 "  (-DTG_CUDA_ARCH=all: portable; empty: the GPU found here)")
endif()

# nvcc compiles the architectures of one file one after another unless told to run them in
# parallel (CUDA 11.2 on): with several, the heaviest unit would otherwise set the build's time.
list(LENGTH CMAKE_CUDA_ARCHITECTURES tg_arch_count)
if(tg_arch_count GREATER 1 AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 11.2)
  set(TG_CUDA_PARALLEL_ARCHS ON)
else()
  set(TG_CUDA_PARALLEL_ARCHS OFF)
endif()
