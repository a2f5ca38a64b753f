# A backend is one folder under src/backends/ whose CMakeLists.txt makes one
# call:
#
#   tessera_add_backend(NAME <folder> SOURCES <file>...
#                       [FACTORY <function>]   # default make_<folder>_backend
#                       [VARIANTS <function>]  # more backends of the same kernel
#                       [HEADER <path>]        # default <folder>/<folder>_backend.h
#                       [LINK <lib>...]        # private dependencies
#                       [PUBLIC_LINK <lib>...])# dependencies its headers expose
#
# It builds the static library tessera_backend_<folder> on tessera_contract
# (the attention contract alone: src/attention/contract/; never the
# dispatcher library, which LINK and PUBLIC_LINK may not name either),
# makes its headers includable as "<folder>/<file>.h", adds the folder's tests/
# (when TESSERA_BUILD_TESTS) and bench/ (when TESSERA_BUILD_BENCH) subfolders
# if they exist, and records the backend for tessera_generate_backend_registry.
# A folder that cannot build here (no CUDA) calls return() before it.
#
# HEADER must declare `std::unique_ptr<tessera::Backend> FACTORY();` in
# namespace tessera. The generated registration source includes that header
# rather than re-declaring the factory itself: a return type is not part of a
# C++ mangled name, so a generated declaration that disagreed with the real one
# would still link, silently; through the header the compiler checks it.
#
# VARIANTS names a function HEADER also declares,
# `std::vector<std::unique_ptr<tessera::Backend>> VARIANTS();`, returning
# backends that run the folder's kernel one fixed way (cpu.flash:f32,
# cpu.flash:amx: a forced product path), named "<main name>:<what>" and
# registered right after the main one. Each is a backend like any other
# (availability, check, priority), so the dispatcher, explain, tune and the
# conformance suite see it with no code of their own; give it a priority
# below every other backend of its device, so that `auto` never falls back
# from the kernel into a variant of the same kernel.
# The libraries above the contract: what no backend may link, directly or
# through another library.
set(TESSERA_ABOVE_CONTRACT tessera_attention tessera_backends tessera_verify tessera_model
    tessera_pipeline tessera_api tessera_server)

function(tessera_add_backend)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;FACTORY;VARIANTS;HEADER"
                        "SOURCES;LINK;PUBLIC_LINK")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tessera_add_backend: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "tessera_add_backend: NAME and SOURCES are required")
  endif()
  foreach(lib IN LISTS arg_LINK arg_PUBLIC_LINK)
    if(lib IN_LIST TESSERA_ABOVE_CONTRACT)
      message(FATAL_ERROR "tessera_add_backend(${arg_NAME}): a backend links the contract "
                          "(tessera_contract), not ${lib}")
    endif()
  endforeach()
  # The folder is the backend: its name, target and header paths all follow.
  get_filename_component(folder "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(NOT arg_NAME STREQUAL folder)
    message(FATAL_ERROR "tessera_add_backend: NAME ${arg_NAME} must be the folder name (${folder})")
  endif()
  if(NOT arg_FACTORY)
    set(arg_FACTORY "make_${arg_NAME}_backend")
  endif()
  if(NOT arg_HEADER)
    set(arg_HEADER "${arg_NAME}/${arg_NAME}_backend.h")
  endif()
  get_filename_component(backends_dir "${CMAKE_CURRENT_SOURCE_DIR}" DIRECTORY)
  if(NOT EXISTS "${backends_dir}/${arg_HEADER}")
    message(FATAL_ERROR "tessera_add_backend(${arg_NAME}): HEADER ${arg_HEADER} not found "
                        "under ${backends_dir}")
  endif()

  set(target tessera_backend_${arg_NAME})
  add_library(${target} STATIC ${arg_SOURCES})
  target_include_directories(${target} PUBLIC "${backends_dir}")
  target_link_libraries(${target}
    PUBLIC tessera_contract ${arg_PUBLIC_LINK}
    PRIVATE tessera_warnings ${arg_LINK})
  tessera_kernel_code(${target})

  set_property(GLOBAL APPEND PROPERTY TESSERA_BACKENDS ${arg_NAME})
  set_property(GLOBAL PROPERTY TESSERA_BACKEND_${arg_NAME}_FACTORY ${arg_FACTORY})
  set_property(GLOBAL PROPERTY TESSERA_BACKEND_${arg_NAME}_HEADER ${arg_HEADER})
  set_property(GLOBAL PROPERTY TESSERA_BACKEND_${arg_NAME}_VARIANTS "${arg_VARIANTS}")

  if(TESSERA_BUILD_TESTS AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/tests/CMakeLists.txt")
    add_subdirectory(tests)
  endif()
  if(TESSERA_BUILD_BENCH AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/bench/CMakeLists.txt")
    add_subdirectory(bench)
  endif()
endfunction()

# Writes OUTPUT, the source of make_builtin_backends()
# (src/backends/builtin_backends.h): one #include and one factory call per
# backend recorded so far, in recording order, each followed by its
# variants. It is rewritten only when that list changes, so a reconfigure
# rebuilds nothing. Sets <out_var> to the backend library targets, for
# linking.
function(tessera_generate_backend_registry template output out_var)
  get_property(names GLOBAL PROPERTY TESSERA_BACKENDS)
  set(TESSERA_BACKEND_INCLUDES "")
  set(TESSERA_BACKEND_CALLS "")
  set(targets "")
  foreach(name IN LISTS names)
    get_property(factory GLOBAL PROPERTY TESSERA_BACKEND_${name}_FACTORY)
    get_property(header GLOBAL PROPERTY TESSERA_BACKEND_${name}_HEADER)
    get_property(variants GLOBAL PROPERTY TESSERA_BACKEND_${name}_VARIANTS)
    string(APPEND TESSERA_BACKEND_INCLUDES "#include \"${header}\"\n")
    string(APPEND TESSERA_BACKEND_CALLS
           "  backends.push_back(${factory}());  // src/backends/${name}\n")
    if(variants)
      string(APPEND TESSERA_BACKEND_CALLS
             "  for (auto& variant : ${variants}()) backends.push_back(std::move(variant));\n")
    endif()
    list(APPEND targets tessera_backend_${name})
  endforeach()
  configure_file("${template}" "${output}" @ONLY)
  set(${out_var} ${targets} PARENT_SCOPE)
endfunction()


# Fails the configure when <target> links, through any chain of libraries,
# one of TESSERA_ABOVE_CONTRACT: such a link would hide from
# contract_only_test the very reach into the dispatcher it exists to catch.
# Call it once every library is defined (targets are looked up by name).
function(tessera_check_contract_only target)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    if(current IN_LIST TESSERA_ABOVE_CONTRACT)
      set(chain ${current})
      set(link ${current})
      while(DEFINED via_${link})
        set(link ${via_${link}})
        list(PREPEND chain ${link})
      endwhile()
      list(JOIN chain " -> " chain)
      message(FATAL_ERROR "${chain}: backends may link only the contract (tessera_contract) "
                          "and what it links")
    endif()
    get_target_property(type ${current} TYPE)
    set(props INTERFACE_LINK_LIBRARIES)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      list(APPEND props LINK_LIBRARIES)
    endif()
    foreach(prop IN LISTS props)
      get_target_property(libs ${current} ${prop})
      foreach(lib IN LISTS libs)
        # $<LINK_ONLY:x> (a static library's private link) still links x.
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
        if(lib AND NOT lib MATCHES "^\\$<" AND NOT DEFINED via_${lib})
          set(via_${lib} ${current})  # how it came in, for the message
          list(APPEND queue ${lib})
        endif()
      endforeach()
    endforeach()
  endwhile()
endfunction()
