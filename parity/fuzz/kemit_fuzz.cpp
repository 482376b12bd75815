// kemit_fuzz: a differential fuzzer over every family's spec space (docs/fuzz.md).
#include <iostream>

#include "kemit/fuzz/fuzz.h"

int main(int argc, char** argv) { return kemit::fuzz::kemit_fuzz_main(argc, argv, std::cout, std::cerr); }
