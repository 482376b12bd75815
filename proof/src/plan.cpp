#include "kemit/proof/plan.h"

#include <algorithm>
#include <sstream>

namespace kemit::proof {
namespace {

const char* const HEADER_V2 = "; kemit launch plan 2";
const char* const HEADER_V1 = "; kemit launch plan 1";

bool is_chunk_name(const std::string& word) {
  for (const auto& names : CHUNK_NAMES)
    if (word == names[0] || word == names[1]) return true;
  return false;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    size_t space = line.find(' ', start);
    words.push_back(line.substr(start, space - start));
    if (space == std::string::npos) break;
    start = space + 1;
  }
  return words;
}

bool is_name(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  return std::all_of(word.begin(), word.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Int parse_integer(const std::string& word, const char* what) {
  if (word.empty() || word.size() > 30 || !std::all_of(word.begin(), word.end(), ::isdigit))
    throw PlanError(std::string(what) + " '" + word + "' is not a decimal integer");
  Int value = 0;
  for (char c : word) value = value * 10 + (c - '0');
  return value;
}

// The reader of one plan: it keeps what the lines before declared, so a later line may only name it.
class PlanReader {
 public:
  Plan read(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      try {
        if (number == 1) {
          header(line);
          if (plan_.version == 1) return plan_;
          continue;
        }
        if (line.empty()) throw PlanError("an empty line");
        statement(line, number);
      } catch (const PlanError& e) {
        throw PlanError("line " + std::to_string(number) + ": " + e.what());
      }
    }
    if (number == 0) throw PlanError("line 1: an empty plan (expected '" + std::string(HEADER_V2) + "')");
    if (plan_.launches.empty()) throw PlanError("line " + std::to_string(number) + ": the plan has no launch");
    return plan_;
  }

 private:
  void header(const std::string& line) {
    if (line == HEADER_V1) plan_.version = 1;
    else if (line != HEADER_V2) throw PlanError("expected '" + std::string(HEADER_V2) + "' (got '" + line + "')");
  }
  void statement(const std::string& line, int number) {
    std::vector<std::string> words = split_words(line);
    if (words[0] == "size") return size(words);
    if (words[0] == "buffer") return buffer(words);
    if (words[0] == "launch") return launch(words, line, number);
    throw PlanError("unknown statement '" + words[0] + "' (size, buffer, launch)");
  }
  void size(const std::vector<std::string>& words) {
    if (!plan_.buffers.empty() || !plan_.launches.empty()) throw PlanError("a size line after a buffer or launch line");
    if (words.size() != 3) throw PlanError("expected 'size <name> <lo>..<hi>'");
    if (!is_name(words[1]) || is_chunk_name(words[1]))
      throw PlanError("'" + words[1] + "' is not a size name");
    if (find_size(plan_, words[1])) throw PlanError("size '" + words[1] + "' is declared twice");
    size_t dots = words[2].find("..");
    if (dots == std::string::npos) throw PlanError("expected a range <lo>..<hi> (got '" + words[2] + "')");
    SizeRange range{words[1], parse_integer(words[2].substr(0, dots), "lo"),
                    parse_integer(words[2].substr(dots + 2), "hi")};
    if (range.lo > range.hi) throw PlanError("size '" + range.name + "' has lo > hi");
    plan_.sizes.push_back(range);
  }
  void buffer(const std::vector<std::string>& words) {
    if (!plan_.launches.empty()) throw PlanError("a buffer line after a launch line");
    if (words.size() != 3 || !is_name(words[1])) throw PlanError("expected 'buffer <name> <bytes>'");
    if (find_buffer(plan_, words[1])) throw PlanError("buffer '" + words[1] + "' is declared twice");
    plan_.buffers.push_back({words[1], sized_expr(words[2], {})});
  }
  // An expression whose names are all sizes, or one of `extra`.
  Expr sized_expr(const std::string& text, const std::vector<std::string>& extra) const {
    Expr e = parse_expr(text);
    std::vector<std::string> names;
    expr_names(e, names);
    for (const auto& name : names)
      if (!find_size(plan_, name) && std::find(extra.begin(), extra.end(), name) == extra.end())
        throw PlanError("'" + name + "' in '" + text + "' is not a declared size");
    return e;
  }
  void launch(const std::vector<std::string>& words, const std::string& line, int number) {
    Launch launch;
    launch.line = number;
    launch.text = line;
    size_t at = 1;
    auto word = [&](const char* what) -> const std::string& {
      if (at >= words.size()) throw PlanError(std::string("the launch line ends before ") + what);
      return words[at++];
    };
    auto keyword = [&](const char* key) {
      if (word(key) != key) throw PlanError(std::string("expected '") + key + "' (got '" + words[at - 1] + "')");
    };
    launch.kernel = word("the kernel");
    std::vector<std::string> extra;
    while (at < words.size() && words[at] == "chunks") {
      ++at;
      if (launch.chunks.size() == MAX_CHUNK_LEVELS)
        throw PlanError("more than " + std::to_string(MAX_CHUNK_LEVELS) + " levels of chunks");
      ChunkLevel level;
      level.size = word("the chunked size");
      if (!find_size(plan_, level.size)) throw PlanError("chunks of '" + level.size + "', not a declared size");
      for (const auto& outer : launch.chunks)
        if (outer.size == level.size) throw PlanError("nested chunks of '" + level.size + "' inside chunks of itself");
      keyword("by");
      level.by = sized_expr(word("the chunk size"), {});
      level.first = CHUNK_NAMES[launch.chunks.size()][0];
      level.count = CHUNK_NAMES[launch.chunks.size()][1];
      extra.push_back(level.first);
      extra.push_back(level.count);
      launch.chunks.push_back(std::move(level));
    }
    keyword("grid");
    grid(word("the grid"), launch, extra);
    keyword("block");
    launch.block = static_cast<int64_t>(parse_integer(word("the block"), "block"));
    keyword("lds");
    launch.lds = static_cast<int64_t>(parse_integer(word("the lds bytes"), "lds"));
    keyword("args");
    while (at < words.size()) launch.args.push_back(binding(words[at++], extra));
    plan_.launches.push_back(std::move(launch));
  }
  void grid(const std::string& text, Launch& launch, const std::vector<std::string>& extra) const {
    std::vector<std::string> dims;
    size_t start = 0;
    // Commas inside ceil(a,b) belong to the expression: split at depth 0 only.
    int depth = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || (text[i] == ',' && depth == 0)) {
        dims.push_back(text.substr(start, i - start));
        start = i + 1;
      } else if (text[i] == '(') ++depth;
      else if (text[i] == ')') --depth;
    }
    if (dims.size() != 3) throw PlanError("grid '" + text + "' does not have three dimensions");
    for (int d = 0; d < 3; ++d) {
      size_t dots = dims[d].find("..");
      GridDim& dim = launch.grid[d];
      dim.is_range = dots != std::string::npos;
      dim.lo = sized_expr(dims[d].substr(0, dots), extra);
      dim.hi = dim.is_range ? sized_expr(dims[d].substr(dots + 2), extra) : dim.lo;
    }
  }
  Binding binding(const std::string& word, const std::vector<std::string>& extra) const {
    size_t equals = word.find('=');
    if (equals == std::string::npos || !is_name(word.substr(0, equals)))
      throw PlanError("binding '" + word + "' is not <param>=<binding>");
    Binding b;
    b.param = word.substr(0, equals);
    std::string rest = word.substr(equals + 1);
    if (rest.rfind("scalar:", 0) == 0) {
      b.kind = Binding::Kind::scalar;
      b.value = sized_expr(rest.substr(7), extra);
      return b;
    }
    if (rest.rfind("buffer:", 0) != 0) throw PlanError("binding '" + word + "' is neither buffer: nor scalar:");
    rest = rest.substr(7);
    size_t at = rest.find('@');
    b.buffer = rest.substr(0, at);
    if (!find_buffer(plan_, b.buffer)) throw PlanError("binding '" + word + "' names no declared buffer");
    if (at == std::string::npos) return b;
    b.kind = Binding::Kind::view;
    std::string view = rest.substr(at + 1);
    // The offset is an expression without a top-level '+': split at the first '+' outside parentheses.
    int depth = 0;
    size_t plus = std::string::npos;
    for (size_t i = 0; i < view.size() && plus == std::string::npos; ++i) {
      if (view[i] == '(') ++depth;
      else if (view[i] == ')') --depth;
      else if (view[i] == '+' && depth == 0) plus = i;
    }
    if (plus == std::string::npos) throw PlanError("view '" + word + "' is not @<offset>+<bytes>");
    b.offset = sized_expr(view.substr(0, plus), extra);
    b.bytes = sized_expr(view.substr(plus + 1), extra);
    return b;
  }

  Plan plan_;
};

}  // namespace

const char* const CHUNK_NAMES[MAX_CHUNK_LEVELS][2] = {{"first", "count"}, {"first2", "count2"}};

std::string chunk_key(int depth) { return depth == 0 ? "chunk" : "chunk" + std::to_string(depth + 1); }

Plan parse_plan(const std::string& text) { return PlanReader().read(text); }

const SizeRange* find_size(const Plan& plan, const std::string& name) {
  for (const auto& s : plan.sizes)
    if (s.name == name) return &s;
  return nullptr;
}

const BufferDecl* find_buffer(const Plan& plan, const std::string& name) {
  for (const auto& b : plan.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

}  // namespace kemit::proof
