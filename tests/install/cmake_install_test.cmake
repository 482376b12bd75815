# ctest install_cmake: `cmake --install` of this build into a scratch prefix, then a project outside
# the tree (consumer/) finds it with find_package(kemit) and links kemit::kemit; the consumer and
# the installed kemit_emit must both run. Arguments: -DBUILD_DIR -DSOURCE_DIR -DSCRATCH.
file(REMOVE_RECURSE ${SCRATCH})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${SCRATCH}/prefix)
foreach(file include/kemit/engine.h lib/libkemit.a lib/cmake/kemit/kemitConfig.cmake
             lib/cmake/kemit/kemitConfigVersion.cmake lib/cmake/kemit/kemitTargets.cmake bin/kemit_emit
             bin/check_byte_identity bin/run_diff bin/golden)
  if(NOT EXISTS ${SCRATCH}/prefix/${file})
    message(FATAL_ERROR "cmake --install did not install ${file}")
  endif()
endforeach()
run(${SCRATCH}/prefix/bin/kemit_emit --version)
if(NOT last_output MATCHES "^kemit_emit [0-9]+\\.[0-9]+\\.[0-9]+ \\(git ")
  message(FATAL_ERROR "installed kemit_emit --version printed: ${last_output}")
endif()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${SCRATCH}/consumer -G Ninja
    -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${SCRATCH}/consumer)
run(${SCRATCH}/consumer/consumer)
if(NOT last_output MATCHES "^kernel [a-z0-9_]+\n.*target datalayout")
  message(FATAL_ERROR "the consumer printed no LLVM module:\n${last_output}")
endif()
message(STATUS "installed into ${SCRATCH}/prefix; the consumer built against it and emitted a module")
file(REMOVE_RECURSE ${SCRATCH})
