# Rewrites the CUDA sources for CPU emulation (see test_emulated_rungs.cpp).
#
# Included by CMakeLists.txt, it only defines tg_emulated_files(), which lists what the rewrite
# reads and writes.  Run as a script, it does the rewrite:
#   cmake -DSRC=<repo>/src -DOVERRIDES=<dir> -DGEN=<build dir> -P emulate.cmake
#
# GEN mirrors SRC, so the sources' relative includes ("../../problem.h") still resolve:
#   src/*.h, src/ozaki/*.h, src/cuda/*.h, src/cuda/*.cuh, src/cuda/*.def, src/cuda/registry.cu
#   and every file of src/cuda/kernels/ are copied with the rewrite below, except that a file of
#   src/cuda/kernels/ with a same-named file in OVERRIDES is replaced by that file, copied as is
#   (a kernel header using inline PTX gets an emulated twin in overrides/); a file of OVERRIDES
#   with no counterpart is added to GEN/cuda/kernels/.
#   Each .cu also gets GEN/<path>.cu.cpp, a one-line wrapper that the host compiler builds.
#
# The rewrite (text only, no line added or removed, so diagnostics keep the original lines):
#   kernel<<<grid, block, smem, stream>>>(args)  ->  kernel ->* emu_config(grid, block, smem, stream)(args)
#   reinterpret_cast<T>(x)                       ->  emu_cast<T>(x), which checks vector alignment
#   extern __shared__ T name[];                  ->  T *const name = <the launch's dynamic buffer>;
#   asm(...), asm volatile(...)                  ->  EMU_INLINE_PTX(...), a compile-time error
# and a `#line 1 "<original>"` on top.  Files are written only when their text changes, so an
# unchanged kernel is not recompiled.

# Lists, relative to SRC, the sources to copy (inputs), the overrides (absolute paths), the
# files the rewrite writes under GEN (relative) and the translation units to compile (absolute,
# under GEN).
function(tg_emulated_files src overrides gen out_inputs out_overrides out_outputs out_units)
  set(cd)
  if(NOT CMAKE_SCRIPT_MODE_FILE)
    set(cd CONFIGURE_DEPENDS)
  endif()
  file(GLOB inputs LIST_DIRECTORIES false RELATIVE "${src}" ${cd}
       "${src}/*.h" "${src}/ozaki/*.h" "${src}/cuda/*.h" "${src}/cuda/*.cuh"
       "${src}/cuda/*.def"
       "${src}/cuda/kernels/*")
  list(APPEND inputs cuda/registry.cu)
  file(GLOB ovr LIST_DIRECTORIES false ${cd} "${overrides}/*")
  list(FILTER ovr EXCLUDE REGEX "/(README[^/]*|\\.[^/]*)$")
  set(outputs ${inputs})
  foreach(o IN LISTS ovr)
    get_filename_component(name "${o}" NAME)
    list(APPEND outputs "cuda/kernels/${name}")
  endforeach()
  list(REMOVE_DUPLICATES outputs)
  set(units)
  foreach(f IN LISTS outputs)
    if(f MATCHES "^cuda/kernels/k[^/]*\\.cu$" OR f STREQUAL "cuda/registry.cu")
      list(APPEND units "${gen}/${f}.cpp")
    endif()
  endforeach()
  set(wrappers)
  foreach(f IN LISTS outputs)
    if(f MATCHES "\\.cu$")
      list(APPEND wrappers "${f}.cpp")
    endif()
  endforeach()
  list(APPEND outputs ${wrappers})
  set(${out_inputs} ${inputs} PARENT_SCOPE)
  set(${out_overrides} ${ovr} PARENT_SCOPE)
  set(${out_outputs} ${outputs} PARENT_SCOPE)
  set(${out_units} ${units} PARENT_SCOPE)
endfunction()

if(NOT CMAKE_SCRIPT_MODE_FILE)
  return()
endif()
cmake_minimum_required(VERSION 3.18)

foreach(v SRC OVERRIDES GEN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "emulate.cmake: pass -D${v}=...")
  endif()
endforeach()

# Writes text to path unless the file already holds exactly that.
function(tg_emit path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()

function(tg_rewrite in out)
  file(READ "${in}" t)
  # Launches.  `[^;{}]*` keeps the match inside one statement; configurations may span lines.
  string(REGEX REPLACE "<<<([^;{}]*)>>>" " ->* emu_config(\\1)" t "${t}")
  string(REGEX REPLACE "(^|[^A-Za-z0-9_])reinterpret_cast([ \t]*<)" "\\1emu_cast\\2" t "${t}")
  string(REGEX REPLACE
         "extern[ \t\r\n]+__shared__([^;[]*[^;[A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)[ \t]*[[][ \t]*[]]"
         "\\1*const \\2 = static_cast<std::remove_cv_t<decltype(\\2)>>(emu_dynamic_shared())" t "${t}")
  string(REGEX REPLACE
         "(^|[^A-Za-z0-9_])(asm|__asm|__asm__)([ \t]+(volatile|__volatile__))?[ \t]*[(]"
         "\\1EMU_INLINE_PTX(" t "${t}")
  tg_emit("${out}" "#line 1 \"${in}\"\n${t}")
endfunction()

tg_emulated_files("${SRC}" "${OVERRIDES}" "${GEN}" inputs ovr outputs units)
set(ovr_names)
foreach(o IN LISTS ovr)
  get_filename_component(name "${o}" NAME)
  list(APPEND ovr_names "${name}")
  file(READ "${o}" t)
  tg_emit("${GEN}/cuda/kernels/${name}" "${t}")
endforeach()
foreach(f IN LISTS inputs)
  get_filename_component(name "${f}" NAME)
  get_filename_component(dir "${f}" DIRECTORY)
  if(dir STREQUAL "cuda/kernels" AND name IN_LIST ovr_names)
    continue() # replaced by its emulated twin
  endif()
  tg_rewrite("${SRC}/${f}" "${GEN}/${f}")
endforeach()
foreach(f IN LISTS outputs)
  if(f MATCHES "\\.cu$")
    get_filename_component(name "${f}" NAME)
    tg_emit("${GEN}/${f}.cpp" "#include \"${name}\"\n")
  endif()
endforeach()
