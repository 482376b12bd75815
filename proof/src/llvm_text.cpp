// The promises of an LLVM module's text: every instruction line `%name = opcode flags...`, its
// flags among nsw nuw exact nneg disjoint inbounds. A flag word anywhere else on a line (an inline
// constant expression) is a promise too, under the instruction's name, with the opcode
// `constant expression`: no canonical obligation stands for it, so it is UNPROVEN, never lost.
#include <sstream>

#include "kemit/proof/prover.h"

namespace kemit::proof {
namespace {

bool is_flag(const std::string& word) {
  return word == "nsw" || word == "nuw" || word == "exact" || word == "nneg" || word == "disjoint" ||
         word == "inbounds";
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (c == ' ' || c == ',' || c == '(' || c == ')' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

}  // namespace

std::vector<LlvmPromise> read_llvm_promises(const std::string& text) {
  std::vector<LlvmPromise> promises;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ';') continue;
    std::vector<std::string> words = words_of(line.substr(0, line.find(';')));
    bool instruction = words.size() >= 3 && words[0][0] == '%' && words[1] == "=";
    size_t at = instruction ? 3 : 0;
    std::string name = instruction ? words[0] : "(line: " + line.substr(line.find_first_not_of(' ')) + ")";
    if (instruction)
      for (; at < words.size() && is_flag(words[at]); ++at) promises.push_back({name, words[at], words[2]});
    for (; at < words.size(); ++at)
      if (is_flag(words[at])) promises.push_back({name, words[at], "constant expression"});
  }
  return promises;
}

}  // namespace kemit::proof
