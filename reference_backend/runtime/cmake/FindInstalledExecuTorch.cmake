# Points CMAKE_PREFIX_PATH at the executorch wheel of the Python environment
# being installed into, unless the caller already says where executorch is
# (executorch_DIR, or an executorch package on CMAKE_PREFIX_PATH).
#
# Under `pip install ./reference_backend` (build isolation) the build runs with
# PYTHONPATH set to an isolated overlay that hides the environment's own
# site-packages, so executorch is asked for once as is and once with
# PYTHONPATH unset: the second finds the executorch installed next to pip.
if(DEFINED executorch_DIR OR DEFINED ENV{executorch_DIR})
  return()
endif()
# A package the caller points at (CMAKE_PREFIX_PATH) wins over the Python's.
find_package(executorch CONFIG QUIET)
if(executorch_FOUND)
  return()
endif()
if(DEFINED SKBUILD_PROJECT_NAME)
  find_package(Python COMPONENTS Interpreter REQUIRED)
else()
  find_package(Python COMPONENTS Interpreter)
endif()
if(NOT Python_EXECUTABLE)
  return()
endif()
set(_probe "import executorch, executorch.version as v; print(list(executorch.__path__)[0]); print(v.__version__)")
execute_process(COMMAND "${Python_EXECUTABLE}" -c "${_probe}"
                OUTPUT_VARIABLE _et_out RESULT_VARIABLE _et_rc ERROR_QUIET
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _et_rc EQUAL 0)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH
                          "${Python_EXECUTABLE}" -c "${_probe}"
                  OUTPUT_VARIABLE _et_out RESULT_VARIABLE _et_rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
if(NOT _et_rc EQUAL 0)
  message(FATAL_ERROR
    "executorch is not installed for ${Python_EXECUTABLE}. Install it first "
    "(pip install executorch==1.5.1), or pass -DCMAKE_PREFIX_PATH=<path of an "
    "installed executorch package>.")
endif()
string(REPLACE "\n" ";" _et_lines "${_et_out}")
list(GET _et_lines 0 _et_root)
list(GET _et_lines 1 _et_py_version)
message(STATUS "Using executorch ${_et_py_version} from ${_et_root}")
list(PREPEND CMAKE_PREFIX_PATH "${_et_root}")
