// libFuzzer target: one line an engine worker wrote, as the driver takes it: parsed under the input
// limits (answer_line.cpp), the tree copied and printed as the pool and reports do, then decoded
// against the protocol (decode_answer.cpp).
#include <cstdint>
#include <string>

#include "answer_line.h"
#include "decode_answer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kemit::driver;
  std::string line(reinterpret_cast<const char*>(data), size);
  nlohmann::json parsed;
  if (!parse_answer_line(line, parsed).empty()) return 0;
  Answer answer{AnswerKind::response, parsed, ""};  // a copy, as the pool's answers are
  (void)answer.response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  decode_answer(answer, "cpp", {"llvm16", "llvm19", "llvm22"});
  return 0;
}
