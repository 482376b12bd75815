# ccache, when it is installed, for every C++ compile: a rebuild of unchanged sources (a clean
# build folder, another worktree or clone of the same tree) takes its objects from the cache.
# Paths under the source tree are made relative (base_dir) and the working folder is left out of
# the hash (hash_dir), so two checkouts at different paths share their objects; the sloppiness
# lets precompiled headers be cached too. -DKEMIT_CCACHE=OFF compiles without it.
find_program(KEMIT_CCACHE_PROGRAM ccache)
option(KEMIT_CCACHE "compile through ccache when it is installed" ON)
if(KEMIT_CCACHE AND KEMIT_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${KEMIT_CCACHE_PROGRAM})
  message(STATUS "kemit: compiling through ${KEMIT_CCACHE_PROGRAM}")
endif()
