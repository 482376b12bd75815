# Sanitizer builds (ci/sanitize.sh, docs/limits.md "Sanitizers"): gcc's AddressSanitizer and
# UndefinedBehaviorSanitizer, detected from CMAKE_CXX_FLAGS.
#
# Every instrumented executable links the sanitizer runtimes itself. The one instrumented piece
# loaded by a process that is not ours is the kemit_cpp module inside /usr/bin/python3, and ASan
# must come first in that interpreter's library list: kemit_sanitize_python_tests() gives only the
# tests whose Python processes import kemit_cpp the runtimes in LD_PRELOAD (and LeakSanitizer off:
# the interpreter keeps its objects at exit). Every other process (llc, cmake, the compiler, a
# fake checker that kills itself) runs without them, as a user runs it.
# The -fsanitize= options, which a program linking the instrumented libkemit.a needs too.
string(REGEX MATCHALL "-fsanitize=[^ ]+" KEMIT_SANITIZER_LINK_OPTIONS "${CMAKE_CXX_FLAGS}")
set(KEMIT_SANITIZER_PRELOAD "")
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(WARNING "AddressSanitizer with ${CMAKE_CXX_COMPILER_ID}: the Python tests get no preloaded "
                    "runtime (ci/sanitize.sh builds with gcc)")
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

# kemit_sanitize_python_tests(TEST...): tests whose Python processes import kemit_cpp.
function(kemit_sanitize_python_tests)
  if(KEMIT_SANITIZER_PRELOAD)
    set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT "LD_PRELOAD=${KEMIT_SANITIZER_PRELOAD}")
    set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::detect_leaks=0")
  endif()
endfunction()
