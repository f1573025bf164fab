# BackendKit.cmake: build an ExecuTorch backend library against the installed
# executorch wheel (docs/out-of-tree-guide.md, "The contract kit").
#
#   backend_kit_find_executorch()
#       Finds the executorch CMake package (CMAKE_PREFIX_PATH or executorch_DIR
#       if given, else the executorch of the Python interpreter, also under pip's
#       build isolation), unless a target executorch::runtime already exists.
#       Sets BACKEND_KIT_EXECUTORCH_VERSION and its _MAJOR, _MINOR, _PATCH.
#       Removes the absolute -rpath that executorch's imported targets add to
#       every consumer (it points into the build machine's site-packages).
#
#   backend_kit_target_versions(<target> <PRIVATE|PUBLIC|INTERFACE> VERSION <x.y.z>)
#       Compile definitions BACKEND_KIT_BACKEND_VERSION ("x.y.z") and
#       BACKEND_KIT_BACKEND_VERSION_{MAJOR,MINOR,PATCH}, and the same for
#       BACKEND_KIT_EXECUTORCH_VERSION (the executorch built against).
#
#   backend_kit_add_backend(<target>
#       SOURCES <source>...             the backend's sources (or $<TARGET_OBJECTS:...>)
#       [VERSION <x.y.z>]               the backend's version; default PROJECT_VERSION
#       [PACKAGE <python package>]      install below <prefix>/<package>/lib; default <target>
#       [DESTINATION <dir>]             or exactly this directory below the prefix
#       [EXPORT <export set>]           passed to install(TARGETS)
#       [CMAKE_PACKAGE <Name>]          (kit 0.1.6) also install a CMake package: find_package(<Name>
#                                       CONFIG) gives <Name>::Backend, the library, kept NEEDED under
#                                       --as-needed since loading it is what registers the backend;
#                                       it refuses an executorch of another minor release. Installed
#                                       in <package>/lib/cmake/<Name>; the conformance runner links
#                                       it with -DRUNNER_BACKEND_PACKAGE=<Name>
#                                       -DRUNNER_BACKEND_TARGET=<Name>::Backend (docs/device-runner.md)
#       [IDENTITY <version.py>]         the package's version module (kit 0.1.4): backend_kit.identity
#                                       generates backend_identity.h from it (and from OPS <ops.py>,
#                                       the operator table, if given) at configure time, on the
#                                       target's include path; VERSION defaults to its __version__
#       [OPS <ops.py>]
#       [BUILD_INFO <key> <value>...]   extra entries for build_info.json)
#       A shared library linked to executorch::runtime, with hidden visibility,
#       the kit's headers, the definitions of backend_kit_target_versions(), a
#       build_info.json next to it (build tree and install), and an install
#       RUNPATH relative to the library: $ORIGIN/<...>/executorch/lib, the
#       wheel's library directory when the install prefix is site-packages
#       (what scikit-build-core does).
cmake_minimum_required(VERSION 3.24)
include_guard(GLOBAL)

set(BACKEND_KIT_VERSION "0.1.6")
get_filename_component(BACKEND_KIT_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
set(_BACKEND_KIT_DIR "${CMAKE_CURRENT_LIST_DIR}")

if(NOT TARGET BackendKit::header)
  add_library(BackendKit::header INTERFACE IMPORTED)
  set_target_properties(BackendKit::header PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${BACKEND_KIT_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()

# Asks the Python interpreter where executorch is. Under pip's build isolation
# PYTHONPATH points at an overlay hiding the environment's site-packages, so
# the question is asked once as is and once without PYTHONPATH.
function(_backend_kit_executorch_from_python out_root)
  if(DEFINED SKBUILD_PROJECT_NAME)
    find_package(Python COMPONENTS Interpreter REQUIRED)
  else()
    find_package(Python COMPONENTS Interpreter)
  endif()
  if(NOT Python_EXECUTABLE)
    return()
  endif()
  set(_probe "import executorch; print(list(executorch.__path__)[0])")
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "${_probe}"
                  OUTPUT_VARIABLE _root RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH "${Python_EXECUTABLE}" -c "${_probe}"
                    OUTPUT_VARIABLE _root RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR
      "executorch is not installed for ${Python_EXECUTABLE}. Install it first "
      "(pip install executorch), or pass -DCMAKE_PREFIX_PATH=<path of an installed executorch package>.")
  endif()
  set(${out_root} "${_root}" PARENT_SCOPE)
endfunction()

macro(backend_kit_find_executorch)
  if(NOT TARGET executorch::runtime)
    if(NOT DEFINED executorch_DIR AND NOT DEFINED ENV{executorch_DIR})
      find_package(executorch CONFIG QUIET)
      if(NOT executorch_FOUND)
        _backend_kit_executorch_from_python(_backend_kit_et_root)
        if(_backend_kit_et_root)
          message(STATUS "BackendKit: using the executorch of the Python interpreter at ${_backend_kit_et_root}")
          list(PREPEND CMAKE_PREFIX_PATH "${_backend_kit_et_root}")
        endif()
      endif()
    endif()
    find_package(executorch CONFIG REQUIRED)
  endif()
  if(NOT TARGET executorch::runtime)
    message(FATAL_ERROR
      "The executorch package at ${executorch_DIR} (executorch ${EXECUTORCH_BUILD_VERSION}) has no "
      "executorch::runtime target: a backend needs the shared runtime that executorch>=1.5 wheels ship.")
  endif()
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)\\.([0-9]+)" _backend_kit_et "${EXECUTORCH_BUILD_VERSION}")
  if(NOT _backend_kit_et)
    message(FATAL_ERROR "BackendKit: cannot read the executorch version from '${EXECUTORCH_BUILD_VERSION}'")
  endif()
  set(BACKEND_KIT_EXECUTORCH_VERSION "${_backend_kit_et}")
  set(BACKEND_KIT_EXECUTORCH_VERSION_MAJOR ${CMAKE_MATCH_1})
  set(BACKEND_KIT_EXECUTORCH_VERSION_MINOR ${CMAKE_MATCH_2})
  set(BACKEND_KIT_EXECUTORCH_VERSION_PATCH ${CMAKE_MATCH_3})
  # The executorch package adds -Wl,-rpath,<absolute site-packages path> to
  # its consumers. A library for a wheel must find libexecutorch.so relative
  # to itself instead (INSTALL_RPATH below); CMake's own build-tree RPATH
  # still lets the build tree run.
  get_directory_property(_backend_kit_imported IMPORTED_TARGETS)
  foreach(_backend_kit_target IN LISTS _backend_kit_imported)
    get_target_property(_backend_kit_opts ${_backend_kit_target} INTERFACE_LINK_OPTIONS)
    if(_backend_kit_opts)
      list(FILTER _backend_kit_opts EXCLUDE REGEX "rpath,/")
      set_target_properties(${_backend_kit_target} PROPERTIES INTERFACE_LINK_OPTIONS "${_backend_kit_opts}")
    endif()
  endforeach()
endmacro()

function(backend_kit_target_versions target scope)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "VERSION" "")
  if(NOT DEFINED BACKEND_KIT_EXECUTORCH_VERSION)
    message(FATAL_ERROR "backend_kit_target_versions(${target}): call backend_kit_find_executorch() first")
  endif()
  if(NOT ARG_VERSION MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "backend_kit_target_versions(${target}): VERSION '${ARG_VERSION}' is not x.y.z")
  endif()
  target_compile_definitions(${target} ${scope}
    BACKEND_KIT_BACKEND_VERSION="${ARG_VERSION}"
    BACKEND_KIT_BACKEND_VERSION_MAJOR=${CMAKE_MATCH_1}
    BACKEND_KIT_BACKEND_VERSION_MINOR=${CMAKE_MATCH_2}
    BACKEND_KIT_BACKEND_VERSION_PATCH=${CMAKE_MATCH_3}
    BACKEND_KIT_EXECUTORCH_VERSION="${BACKEND_KIT_EXECUTORCH_VERSION}"
    BACKEND_KIT_EXECUTORCH_VERSION_MAJOR=${BACKEND_KIT_EXECUTORCH_VERSION_MAJOR}
    BACKEND_KIT_EXECUTORCH_VERSION_MINOR=${BACKEND_KIT_EXECUTORCH_VERSION_MINOR}
    BACKEND_KIT_EXECUTORCH_VERSION_PATCH=${BACKEND_KIT_EXECUTORCH_VERSION_PATCH})
endfunction()

# Writes <dir>/backend_identity.h from a package's version module (and its operator table) with
# backend_kit.identity, run by the Python interpreter from the kit's own directory; sets <out_version>
# to the module's __version__. Configuring again follows a change of either module.
function(_backend_kit_identity target version_py ops_py out_dir out_version)
  if(NOT Python_EXECUTABLE)
    find_package(Python COMPONENTS Interpreter REQUIRED)
  endif()
  get_filename_component(_py "${version_py}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(_args "${_py}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_py}")
  if(ops_py)
    get_filename_component(_ops "${ops_py}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _args --ops "${_ops}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_ops}")
  endif()
  get_filename_component(_kit_parent "${_BACKEND_KIT_DIR}/../.." ABSOLUTE)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${_kit_parent}"
            "${Python_EXECUTABLE}" -m backend_kit.identity ${_args} --header "${out_dir}/backend_identity.h"
            --cmake "${out_dir}/backend_identity.cmake"
    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "backend_kit_add_backend(${target}): IDENTITY ${version_py}: ${_err}")
  endif()
  include("${out_dir}/backend_identity.cmake")
  set(${out_version} "${BACKEND_IDENTITY_VERSION}" PARENT_SCOPE)
endfunction()

function(backend_kit_add_backend target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "VERSION;PACKAGE;DESTINATION;EXPORT;IDENTITY;OPS;CMAKE_PACKAGE" "SOURCES;BUILD_INFO")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "backend_kit_add_backend(${target}): SOURCES is required")
  endif()
  if(ARG_CMAKE_PACKAGE AND ARG_EXPORT)
    message(FATAL_ERROR "backend_kit_add_backend(${target}): give EXPORT or CMAKE_PACKAGE, not both "
                        "(CMAKE_PACKAGE installs its own export set, ${ARG_CMAKE_PACKAGE}Targets)")
  endif()
  if(ARG_CMAKE_PACKAGE AND NOT ARG_CMAKE_PACKAGE MATCHES "^[A-Za-z][A-Za-z0-9_]*$")
    message(FATAL_ERROR "backend_kit_add_backend(${target}): CMAKE_PACKAGE '${ARG_CMAKE_PACKAGE}' is not a "
                        "CMake package name (a letter, then letters, digits or _)")
  endif()
  if(ARG_OPS AND NOT ARG_IDENTITY)
    message(FATAL_ERROR "backend_kit_add_backend(${target}): OPS needs IDENTITY")
  endif()
  if(ARG_IDENTITY)
    set(_identity_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_identity")
    _backend_kit_identity(${target} "${ARG_IDENTITY}" "${ARG_OPS}" "${_identity_dir}" _identity_version)
    if(NOT ARG_VERSION)
      set(ARG_VERSION "${_identity_version}")
    endif()
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT ARG_PACKAGE)
    set(ARG_PACKAGE "${target}")
  endif()
  if(NOT DEFINED ARG_DESTINATION)
    set(ARG_DESTINATION "${ARG_PACKAGE}/lib")
  endif()
  if(NOT TARGET executorch::runtime)
    backend_kit_find_executorch()
  endif()

  add_library(${target} SHARED ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC executorch::runtime)
  target_include_directories(${target} PRIVATE "$<BUILD_INTERFACE:${BACKEND_KIT_INCLUDE_DIR}>")
  if(ARG_IDENTITY)
    target_include_directories(${target} PRIVATE "$<BUILD_INTERFACE:${_identity_dir}>")
  endif()
  target_compile_features(${target} PUBLIC cxx_std_17)
  backend_kit_target_versions(${target} PRIVATE VERSION "${ARG_VERSION}")
  # The RUNPATH from the installed library to <site-packages>/executorch/lib.
  file(RELATIVE_PATH _up "/site-packages/${ARG_DESTINATION}" "/site-packages/executorch/lib")
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN/${_up}")

  # build_info.json: what the Python loader (backend_kit.runtime) checks.
  set(_info "{\n  \"backend_version\": \"${ARG_VERSION}\",\n")
  string(APPEND _info "  \"executorch_version\": \"${EXECUTORCH_BUILD_VERSION}\",\n")
  string(APPEND _info "  \"executorch_dir\": \"${executorch_DIR}\",\n")
  string(APPEND _info "  \"backend_kit_version\": \"${BACKEND_KIT_VERSION}\",\n")
  string(APPEND _info "  \"compiler\": \"${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}\",\n")
  string(APPEND _info "  \"cmake_version\": \"${CMAKE_VERSION}\"")
  set(_extra ${ARG_BUILD_INFO})
  while(_extra)
    list(POP_FRONT _extra _key _value)
    string(APPEND _info ",\n  \"${_key}\": \"${_value}\"")
  endwhile()
  string(APPEND _info "\n}\n")
  file(GENERATE OUTPUT "$<TARGET_FILE_DIR:${target}>/build_info.json" CONTENT "${_info}")
  file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${target}_build_info/build_info.json" CONTENT "${_info}")

  if(ARG_CMAKE_PACKAGE)
    _backend_kit_cmake_package(${target} ${ARG_CMAKE_PACKAGE} "${ARG_VERSION}" "${ARG_DESTINATION}")
  elseif(ARG_EXPORT)
    install(TARGETS ${target} EXPORT ${ARG_EXPORT} LIBRARY DESTINATION "${ARG_DESTINATION}")
  else()
    install(TARGETS ${target} LIBRARY DESTINATION "${ARG_DESTINATION}")
  endif()
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/${target}_build_info/build_info.json" DESTINATION "${ARG_DESTINATION}")
endfunction()

# The CMake package of backend_kit_add_backend(... CMAKE_PACKAGE <name>): <name>::Backend (an alias in
# the build tree too), its targets file, a config that finds executorch and refuses another minor
# release than the one built against, and a version file (same minor).
function(_backend_kit_cmake_package target name version destination)
  include(CMakePackageConfigHelpers)
  add_library(${name}::Backend ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME Backend)
  set(_dir "${destination}/cmake/${name}")
  install(TARGETS ${target} EXPORT ${name}Targets LIBRARY DESTINATION "${destination}")
  install(EXPORT ${name}Targets NAMESPACE ${name}:: DESTINATION "${_dir}")
  set(_built "${EXECUTORCH_BUILD_VERSION}")
  set(_config "${CMAKE_CURRENT_BINARY_DIR}/${target}_package/${name}Config.cmake")
  file(CONFIGURE OUTPUT "${_config}" @ONLY CONTENT [=[
# find_package(@name@ CONFIG) gives @name@::Backend: the backend's shared library, which registers the
# backend when it is loaded (made by the executorch-backend-kit's backend_kit_add_backend).
include(CMakeFindDependencyMacro)
find_dependency(executorch CONFIG)
string(REGEX MATCH "^[0-9]+\.[0-9]+" _built_minor "@_built@")
string(REGEX MATCH "^[0-9]+\.[0-9]+" _found_minor "${EXECUTORCH_BUILD_VERSION}")
if(NOT _built_minor STREQUAL _found_minor)
  set(@name@_FOUND FALSE)
  set(@name@_NOT_FOUND_MESSAGE "@name@ @version@ was built for executorch @_built@, but this project uses executorch ${EXECUTORCH_BUILD_VERSION} (${executorch_DIR}): a backend library works only with the executorch minor release it was built for. Rebuild it against this executorch, or point CMAKE_PREFIX_PATH at executorch ${_built_minor}.x.")
  return()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/@name@Targets.cmake")
# Nothing calls into the library (loading it registers the backend): keep it NEEDED under --as-needed.
if(NOT APPLE AND NOT WIN32)
  get_target_property(_configs @name@::Backend IMPORTED_CONFIGURATIONS)
  list(GET _configs 0 _config)
  get_target_property(_location @name@::Backend IMPORTED_LOCATION_${_config})
  set_property(TARGET @name@::Backend APPEND PROPERTY INTERFACE_LINK_OPTIONS
    "LINKER:--push-state,--no-as-needed,${_location},--pop-state")
endif()
]=])
  write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/${target}_package/${name}ConfigVersion.cmake"
    VERSION "${version}" COMPATIBILITY SameMinorVersion)
  install(FILES "${_config}" "${CMAKE_CURRENT_BINARY_DIR}/${target}_package/${name}ConfigVersion.cmake"
    DESTINATION "${_dir}")
endfunction()
