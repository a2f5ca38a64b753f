# How hard each part of tessera is optimised, per build (docs/DECISIONS.md,
# "CI time"). Compile time is most of the CI run, and most of it goes to code
# whose own speed no test or user measures; the presets set the default and
# two roles depart from it:
#
#   tessera_kernel_code(<target>...)  compute kernels (backends, model forward,
#       the naive reference): the sanitizer build compiles everything else at
#       -O0 and these at -O1, or the sanitized conformance grid and model
#       forwards would run many times slower.
#   tessera_driver_code(<target>...)  code that only parses, prints and calls
#       down (test drivers, the CLI layer): -O1 in the release build, whose
#       default is -O3. The libraries they call keep -O3.
#
# A flag added here comes after the preset's on the command line, so it wins.
function(tessera_kernel_code)
  if(TESSERA_SANITIZE)
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE -O1)
    endforeach()
  endif()
endfunction()

# The same for single files of a library that is not hot as a whole: leaf
# functions the kernels call per element or per row (dtype conversions,
# TensorView::offset, the sequence ranges), the GEMM wrappers. Call it in the
# CMakeLists that adds the files.
function(tessera_kernel_sources)
  if(TESSERA_SANITIZE)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS -O1)
  endif()
endfunction()

function(tessera_driver_code)
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE -O1)
    endforeach()
  endif()
endfunction()

# tessera_unity_build(<target>...): the target's files compile as unity
# batches (CMake's UNITY_BUILD: up to 8 files #included into one translation
# unit), so the heavy headers almost every file includes (CLI11, nlohmann/json,
# GoogleTest, cpp-httplib, the standard library) are parsed, and their inline
# code generated, once per batch instead of once per file (docs/DECISIONS.md,
# "CI time", stop 18). Files with their own compile options stay alone (CMake
# leaves them out); a file whose file-local names clash with another's
# compiles alone (tessera_unity_skip). Not for Highway's foreach_target
# files, which include themselves once per SIMD target.
function(tessera_unity_build)
  if(NOT TESSERA_UNITY_BUILD)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    endif()
  endforeach()
endfunction()

# tessera_unity_skip(<target> <file>...): files (paths from the source root)
# that compile alone: their file-local names clash with another file's of the
# same target once both are in one batch.
function(tessera_unity_skip target)
  if(TARGET ${target})
    list(TRANSFORM ARGN PREPEND ${PROJECT_SOURCE_DIR}/)
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endfunction()
