// check_byte_identity: the parity gate between the C++ and the Python engine (docs/driver.md).
#include <unistd.h>

#include <iostream>

#include "kemit/driver/check.h"

int main(int argc, char** argv) {
  return kemit::driver::check_byte_identity_main(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
