# `cmake --install BUILD [--prefix P]` (docs/packaging.md): the C++ engine library and its headers,
# the tools, and a CMake package (kemitConfig.cmake, kemitConfigVersion.cmake, kemitTargets.cmake)
# so that another project's find_package(kemit) gets the imported target kemit::kemit.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(kemit_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kemit)

# An instrumented libkemit.a (a sanitizer build) calls the sanitizer runtimes: its consumers link them.
if(KEMIT_SANITIZER_LINK_OPTIONS)
  target_link_options(kemit INTERFACE "$<INSTALL_INTERFACE:${KEMIT_SANITIZER_LINK_OPTIONS}>")
endif()
install(TARGETS kemit EXPORT kemitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cpp_engine/include/kemit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# kemit/ir/types.h includes the header generated from tables/*.json.
install(FILES ${KEMIT_TABLES_HEADER} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kemit)
# The harness tools find their tree and build by the rule of docs/driver.md "Where it looks"
# (--root / --build when run from the prefix); check_llvm's checkers stay in the build.
foreach(tool kemit_emit check_byte_identity run_diff check_llvm golden kemit_report)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT kemitTargets NAMESPACE kemit:: DESTINATION ${kemit_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kemitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kemitConfig.cmake INSTALL_DESTINATION ${kemit_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kemitConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kemitConfig.cmake ${PROJECT_BINARY_DIR}/kemitConfigVersion.cmake
        DESTINATION ${kemit_cmake_dir})
