# The installed C++ package: `cmake --install` puts include/tessera/, the
# shared library libtessera.so and a CMake package config into the prefix;
# `find_package(tessera CONFIG REQUIRED)` then gives tessera::tessera.
#
# Why one shared library (docs/DECISIONS.md): the public headers include only
# the standard library, so a shared libtessera keeps every other dependency
# (oneDNN, OpenMP, Highway, ICU, nlohmann_json, the CUDA runtime)
# private: a user links one library and needs none of their -dev packages.
# The layers stay static libraries inside the build (tests, the CLI); the
# ones the public headers expose are linked whole, so every public symbol is
# in the .so whether or not the API sources use it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A library needs a source of its own; all its code comes from the layers.
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/tessera_shared.cc
     CONTENT "// libtessera.so: see cmake/TesseraPackage.cmake\n")
add_library(tessera_shared SHARED ${PROJECT_BINARY_DIR}/tessera_shared.cc)
target_link_libraries(tessera_shared
  PUBLIC Threads::Threads
  # (Not $<LINK_LIBRARY:WHOLE_ARCHIVE,...>: CMake 3.25 refuses a library
  # that also comes in plainly through another's link interface.)
  PRIVATE -Wl,--whole-archive tessera_runtime tessera_contract tessera_attention tessera_backends
          tessera_api -Wl,--no-whole-archive tessera_warnings)
target_include_directories(tessera_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(tessera_shared PROPERTIES
  OUTPUT_NAME tessera
  EXPORT_NAME tessera
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  # The libraries it was linked against from outside the build tree (the
  # CUDA runtime under /usr/local/cuda) stay findable once installed.
  INSTALL_RPATH_USE_LINK_PATH TRUE)
add_library(tessera::tessera ALIAS tessera_shared)

install(TARGETS tessera_shared EXPORT tesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${TESSERA_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesseraConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tesseraConfig.cmake
                              INSTALL_DESTINATION ${TESSERA_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})
