# find_package(BackendKit CONFIG REQUIRED), with
#   -DBackendKit_DIR=$(python -m backend_kit cmake-dir)
# gives the functions of BackendKit.cmake (see there) and the target
# BackendKit::header (the header-only C++ part: include <backend_kit/header.h>).
include("${CMAKE_CURRENT_LIST_DIR}/BackendKit.cmake")
set(BackendKit_FOUND TRUE)
