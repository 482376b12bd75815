// check_byte_identity: the parity gate between the C++ and the Python engine (docs/driver.md).
#include <malloc.h>
#include <unistd.h>

#include <iostream>

#include "kemit/driver/check.h"

int main(int argc, char** argv) {
  // The driver holds tens of MB of answer text in strings of up to a few hundred KB, allocated
  // and freed all run long. glibc's defaults map each large one fresh and hand freed memory back
  // at once, so every answer paid page faults again (a quarter of the driver's CPU): keep such
  // blocks on the heap and keep freed memory for the next answers.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return kemit::driver::check_byte_identity_main(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
