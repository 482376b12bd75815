// libFuzzer target: the LLVM lane's reader of a checker's answer line (checker_answer.cpp): RESULT,
// FATAL or anything out of protocol, with tab-separated, backslash-escaped fields.
#include <cstdint>
#include <string>

#include "checker_session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  std::string problem;
  kemit::lane::CheckerAnswer answer =
      kemit::lane::decode_checker_line(line, "elementwise_1_llvm19", "kemit_llcheck19", problem);
  (void)answer;
  return 0;
}
