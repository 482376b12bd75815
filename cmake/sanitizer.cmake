# Sanitizer builds (ci/sanitize.sh, docs/limits.md "Sanitizers"): gcc's AddressSanitizer and
# UndefinedBehaviorSanitizer, detected from CMAKE_CXX_FLAGS.
#
# Every instrumented executable links the sanitizer runtimes itself. The one instrumented piece
# loaded by a program that is not ours is the kemit_cpp module inside /usr/bin/python3, and ASan
# must come first in that interpreter's library list. kemit_sanitize_python_tests() marks the
# tests whose Python processes import kemit_cpp: there every Python process starts itself again
# with the runtimes in LD_PRELOAD and takes them out of its children's environment
# (sanitizer_python/sitecustomize.py), and LeakSanitizer is off (the interpreter keeps its objects
# at exit). No other process gets the runtimes: llc, cmake, git, the compiler and a fake checker
# that kills itself run as a user runs them.
# The -fsanitize= options, which a program linking the instrumented libkemit.a needs too.
string(REGEX MATCHALL "-fsanitize=[^ ]+" KEMIT_SANITIZER_LINK_OPTIONS "${CMAKE_CXX_FLAGS}")
set(KEMIT_SANITIZER_PRELOAD "")
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # ci/libfuzzer.sh's clang tree runs no ctest; ci/sanitize.sh builds with gcc.
    message(STATUS "AddressSanitizer with ${CMAKE_CXX_COMPILER_ID}: the tests that import kemit_cpp "
                   "get no preloaded runtime")
  else()
    foreach(runtime libasan.so libubsan.so)
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${runtime}
                      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT IS_ABSOLUTE "${path}" OR NOT EXISTS "${path}")
        message(FATAL_ERROR "AddressSanitizer build: ${CMAKE_CXX_COMPILER} does not find ${runtime} "
                            "(install gcc's sanitizer runtimes: ci/packages.txt)")
      endif()
      list(APPEND KEMIT_SANITIZER_PRELOAD "${path}")
    endforeach()
    list(JOIN KEMIT_SANITIZER_PRELOAD ":" KEMIT_SANITIZER_PRELOAD)
  endif()
endif()

# kemit_sanitize_python_tests(TEST...): tests whose Python processes import kemit_cpp. They run the
# most instrumented code (the interpreter, both engines in one process): their TIMEOUT, which only
# stops a hung run, is KEMIT_SANITIZER_TIMEOUT_FACTOR times longer (pytest took over 300 s on the
# loaded 2-core machine).
set(KEMIT_SANITIZER_TIMEOUT_FACTOR 3)
function(kemit_sanitize_python_tests)
  if(KEMIT_SANITIZER_PRELOAD)
    foreach(test IN LISTS ARGN)
      get_property(timeout TEST ${test} PROPERTY TIMEOUT)
      if(timeout)
        math(EXPR timeout "${timeout} * ${KEMIT_SANITIZER_TIMEOUT_FACTOR}")
        set_property(TEST ${test} PROPERTY TIMEOUT ${timeout})
      endif()
    endforeach()
    set(folder ${PROJECT_SOURCE_DIR}/cmake/sanitizer_python)
    set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT "KEMIT_SANITIZER_PRELOAD=${KEMIT_SANITIZER_PRELOAD}"
                 "PYTHONPATH=${folder}" "KEMIT_SANITIZER_PYTHONPATH=${folder}")
    set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::detect_leaks=0")
  endif()
endfunction()
