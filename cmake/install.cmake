# Install rules: `cmake --install <build> [--prefix <dir>]` lays out
#
#   include/tilegemm.h, include/tilegemm_cblas.h
#   <libdir>/libtilegemm.so*, <libdir>/libtilegemm.a
#   bin/tilegemm                                  the CLI
#   <libdir>/cmake/tilegemm/tilegemmConfig.cmake  find_package(tilegemm): tilegemm::tilegemm
#                                                 (shared) and tilegemm::tilegemm_static
#   <libdir>/pkgconfig/tilegemm.pc                pkg-config tilegemm [--static]
#
# Everything installed is relocatable: the CMake package and the .pc file find the prefix from
# their own location, so `--prefix` at install time needs no reconfigure.
# Included at the end of the top-level CMakeLists.txt, after every target exists.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TG_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilegemm)

install(FILES ${PROJECT_SOURCE_DIR}/include/tilegemm.h ${PROJECT_SOURCE_DIR}/include/tilegemm_cblas.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel)

# The CUDA objects are C++ compiled by nvcc.  Inside this build the libraries link with the CUDA
# linker; a consumer of the installed static archive links with its own (often C) linker, so the
# exported static target names the C++ runtime itself.
if(TG_HAVE_CUDA)
  target_link_libraries(tilegemm_static INTERFACE $<INSTALL_INTERFACE:stdc++>)
endif()

install(TARGETS tilegemm tilegemm_static EXPORT tilegemmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT devel
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The CLI links the static library privately; it is installed but not exported.
install(TARGETS tilegemm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

install(EXPORT tilegemmTargets NAMESPACE tilegemm:: FILE tilegemmTargets.cmake
        DESTINATION ${TG_INSTALL_CMAKEDIR} COMPONENT devel)

# --- tilegemmConfig.cmake: the dependencies the targets' interfaces name, then the targets. ----
# The libraries link Threads::Threads, m and OpenMP::OpenMP_C (when found) PUBLIC, and the static
# one CUDA::cudart_static (when the CUDA backend was built), so a consumer needs those imported
# targets too.
set(TG_CONFIG_DEPENDENCIES "find_dependency(Threads)\n")
if(OpenMP_C_FOUND)
  string(APPEND TG_CONFIG_DEPENDENCIES
    "if(NOT CMAKE_C_COMPILER_LOADED)\n"
    "  enable_language(C) # FindOpenMP's C component needs the C compiler\n"
    "endif()\n"
    "find_dependency(OpenMP COMPONENTS C)\n")
endif()
if(TG_HAVE_CUDA)
  string(APPEND TG_CONFIG_DEPENDENCIES "find_dependency(CUDAToolkit)\n")
endif()

set(TG_CONFIG_IN [=[
# tilegemm @PROJECT_VERSION@: CMake package.
#   find_package(tilegemm REQUIRED)
#   target_link_libraries(app PRIVATE tilegemm::tilegemm)         # shared library
#   target_link_libraries(app PRIVATE tilegemm::tilegemm_static)  # static library
# tilegemm_HAVE_CUDA tells whether the installed library has its CUDA backend.
@PACKAGE_INIT@

include(CMakeFindDependencyMacro)
@TG_CONFIG_DEPENDENCIES@
include("${CMAKE_CURRENT_LIST_DIR}/tilegemmTargets.cmake")

set(tilegemm_HAVE_CUDA @TG_HAVE_CUDA@)
set_and_check(tilegemm_INCLUDE_DIR "@PACKAGE_CMAKE_INSTALL_INCLUDEDIR@")
check_required_components(tilegemm)
]=])
# Pass 1 fills this file's own values and keeps the placeholders of pass 2.
set(PACKAGE_INIT "@PACKAGE_INIT@")
set(PACKAGE_CMAKE_INSTALL_INCLUDEDIR "@PACKAGE_CMAKE_INSTALL_INCLUDEDIR@")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/cmake/tilegemmConfig.cmake.in
     CONTENT "${TG_CONFIG_IN}" @ONLY)
unset(PACKAGE_INIT)
unset(PACKAGE_CMAKE_INSTALL_INCLUDEDIR)
# Pass 2 fills @PACKAGE_INIT@ and the PACKAGE_ paths (relocatable).
configure_package_config_file(${PROJECT_BINARY_DIR}/cmake/tilegemmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tilegemmConfig.cmake
  INSTALL_DESTINATION ${TG_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tilegemmConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tilegemmConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/tilegemmConfigVersion.cmake
        DESTINATION ${TG_INSTALL_CMAKEDIR} COMPONENT devel)

# --- tilegemm.pc --------------------------------------------------------------------------------
# The prefix is found from the .pc file's own directory (${pcfiledir}), so the tree can move.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TG_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(TG_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(TG_PC_PREFIX "\${pcfiledir}")
  string(REPLACE "/" ";" _tg_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  foreach(_tg_part IN LISTS _tg_parts)
    if(NOT _tg_part STREQUAL "" AND NOT _tg_part STREQUAL ".")
      string(APPEND TG_PC_PREFIX "/..")
    endif()
  endforeach()
  set(TG_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TG_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TG_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# What a static link needs besides libtilegemm.a (a shared link needs -ltilegemm alone).
set(TG_PC_LIBS_PRIVATE "-lm")
if(OpenMP_C_FOUND)
  string(APPEND TG_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
string(APPEND TG_PC_LIBS_PRIVATE " -pthread")
if(TG_HAVE_CUDA)
  # The CUDA objects are C++ compiled by nvcc: the static archive needs the C++ runtime too.
  # The CUDA runtime is the static one, as in the shared library (no libcudart.so at run time).
  string(APPEND TG_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lstdc++")
endif()

set(TG_PC_IN [=[
prefix=@TG_PC_PREFIX@
exec_prefix=${prefix}
libdir=@TG_PC_LIBDIR@
includedir=@TG_PC_INCLUDEDIR@

Name: tilegemm
Description: @PROJECT_DESCRIPTION@
Version: @PROJECT_VERSION@
Libs: -L${libdir} -ltilegemm
Libs.private: @TG_PC_LIBS_PRIVATE@
Cflags: -I${includedir}
]=])
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/tilegemm.pc CONTENT "${TG_PC_IN}" @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tilegemm.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT devel)
