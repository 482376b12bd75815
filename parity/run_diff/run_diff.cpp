// run_diff: the differential driver with golden modes (docs/run_diff.md). Everything lives in
// the library kemit_run_diff (parity/run_diff/).
#include <unistd.h>

#include <iostream>

#include "kemit/run_diff/run_diff.h"

int main(int argc, char** argv) {
  return kemit::run_diff::run_diff_main(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
