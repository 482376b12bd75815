# The malloc the engine's and the lanes' programs link (kemit_emit, its bench, run_diff,
# check_byte_identity, check_llvm, check_numerics, the checkers, kemit_prove): KEMIT_ALLOCATOR is
# tcmalloc (gperftools' tcmalloc_minimal, Debian's libgoogle-perftools-dev) or system (glibc). The
# engine, LLVM's code generator and z3 make and free many small objects per config; tcmalloc serves
# them in fewer instructions than glibc (README "Speed", bench/results.md). The library `kemit`
# links none: a program embedding it keeps its own malloc, and so does the kemit_cpp module inside
# Python. Sanitizer builds use the system one (ASan replaces malloc itself).
set(KEMIT_ALLOCATOR "tcmalloc" CACHE STRING "malloc of the engine's programs: tcmalloc or system")
set_property(CACHE KEMIT_ALLOCATOR PROPERTY STRINGS tcmalloc system)
set(KEMIT_ALLOCATOR_LIBRARY "")
if(KEMIT_SANITIZER_LINK_OPTIONS)
  message(STATUS "kemit allocator: system (sanitizer build)")
elseif(KEMIT_ALLOCATOR STREQUAL "tcmalloc")
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(KEMIT_TCMALLOC REQUIRED IMPORTED_TARGET libtcmalloc_minimal)
  set(KEMIT_ALLOCATOR_LIBRARY PkgConfig::KEMIT_TCMALLOC)
elseif(NOT KEMIT_ALLOCATOR STREQUAL "system")
  message(FATAL_ERROR "KEMIT_ALLOCATOR must be tcmalloc or system (got '${KEMIT_ALLOCATOR}')")
endif()

# kemit_use_allocator(TARGET): TARGET (an executable) allocates through KEMIT_ALLOCATOR.
function(kemit_use_allocator target)
  if(KEMIT_ALLOCATOR_LIBRARY)
    target_link_libraries(${target} PRIVATE ${KEMIT_ALLOCATOR_LIBRARY})
  endif()
endfunction()
