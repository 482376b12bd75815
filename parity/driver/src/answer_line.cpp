#include "answer_line.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kemit/input_limits.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

// The bytes of `word` (8 bytes in memory order) that end a plain run of a string: '"', '\\', a
// control byte or a non-ASCII byte, as the high bit of each such byte. The lowest flag is exact (a
// borrow only runs upward, so a false flag lies above a true one): it is the first such byte.
// (Bit Twiddling Hacks, "determine if a word has a byte less than n" and "... equal to n".)
uint64_t special_bytes(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  auto zero_bytes = [&](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
  return (word & kHighs) | below_space | zero_bytes(word ^ (kOnes * '"')) | zero_bytes(word ^ (kOnes * '\\'));
}

bool is_plain_byte(unsigned char c) { return c != '"' && c != '\\' && c >= 0x20 && c < 0x80; }

// The first byte at or after `p` that is not plain (or `end`), eight bytes at a time. The IR has
// an escaped newline every few dozen bytes, so the position comes from the word itself, not from
// a byte-by-byte rescan.
const char* end_of_plain_run(const char* p, const char* end) {
  for (uint64_t word; end - p >= 8; p += 8) {
    std::memcpy(&word, p, 8);
    uint64_t special = special_bytes(word);
    if (special == 0) continue;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return p + (__builtin_ctzll(special) >> 3);
#else
    break;
#endif
  }
  while (p < end && is_plain_byte(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// A fast path for the answers' JSON: nlohmann's lexer copies every string char by char and then
// again into the tree, about half of the driver's CPU over the ~28 MB of answers of a full gate.
// This parser takes only a plain subset (objects without repeated keys, arrays nested at most
// kMaxJsonDepth deep, strings of printable ASCII with the short escapes, integers of at most 18
// digits, true, false, null) and builds the same tree nlohmann would (non-negative integers
// unsigned, as nlohmann makes them). That subset is inside the input limits by construction, so
// a line it takes needs no separate limit scan. On anything else it gives up and the line is
// checked against the limits and parsed by nlohmann as before, so nlohmann still decides every
// malformed or unusual line.
class PlainJson {
 public:
  explicit PlainJson(const std::string& text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool parse(json& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  static constexpr int kMaxDepth = static_cast<int>(limits::kMaxJsonDepth);  // containers inside one another
  const char* p_;
  const char* end_;

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool literal(const char* word, size_t size) {
    if (static_cast<size_t>(end_ - p_) < size || std::memcmp(p_, word, size) != 0) return false;
    p_ += size;
    return true;
  }

  // `depth`: the containers around this value. A container here is the (depth + 1)-th level, the
  // count find_json_limit_breach keeps.
  bool value(json& out, int depth) {
    if (p_ >= end_) return false;
    switch (*p_) {
      case '{': return depth < kMaxDepth && object(out, depth);
      case '[': return depth < kMaxDepth && array(out, depth);
      case '"':
        out = std::string();
        return string(out.get_ref<std::string&>());
      case 't': out = true; return literal("true", 4);
      case 'f': out = false; return literal("false", 5);
      case 'n': out = nullptr; return literal("null", 4);
      default: return integer(out);
    }
  }

  bool object(json& out, int depth) {
    ++p_;
    out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    skip_space();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    while (true) {
      skip_space();
      std::string key;
      if (p_ >= end_ || *p_ != '"' || !string(key)) return false;
      skip_space();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      skip_space();
      auto [member, inserted] = members.try_emplace(std::move(key));
      if (!inserted || !value(member->second, depth + 1)) return false;
      skip_space();
      if (p_ >= end_) return false;
      if (*p_ == '}') return ++p_, true;
      if (*p_++ != ',') return false;
    }
  }

  bool array(json& out, int depth) {
    ++p_;
    out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    skip_space();
    if (p_ < end_ && *p_ == ']') return ++p_, true;
    while (true) {
      skip_space();
      if (!value(items.emplace_back(), depth + 1)) return false;
      skip_space();
      if (p_ >= end_) return false;
      if (*p_ == ']') return ++p_, true;
      if (*p_++ != ',') return false;
    }
  }

  // At the opening quote; appends the decoded text to out.
  bool string(std::string& out) {
    ++p_;
    // Room for the whole text first (it is no longer than its JSON): one allocation. Growing as it
    // goes instead cost more in malloc and copies than this second scan costs.
    const char* close = p_;
    while ((close = end_of_plain_run(close, end_)) < end_ && *close == '\\') close += 2;
    out.reserve(out.size() + static_cast<size_t>(std::min(close, end_) - p_));
    while (true) {
      const char* run = p_;
      p_ = end_of_plain_run(p_, end_);
      out.append(run, static_cast<size_t>(p_ - run));
      if (p_ >= end_) return false;
      if (*p_ == '"') return ++p_, true;
      if (*p_ != '\\' || ++p_ >= end_) return false;  // a control byte, non-ASCII: nlohmann's call
      switch (*p_++) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        default: return false;  // \u escapes and bad escapes: nlohmann's call
      }
    }
  }

  // -?(0|[1-9][0-9]*) of at most 18 digits, not followed by a fraction or an exponent.
  bool integer(json& out) {
    bool negative = p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    const char* digits = p_;
    uint64_t number = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') number = number * 10 + static_cast<uint64_t>(*p_++ - '0');
    size_t count = static_cast<size_t>(p_ - digits);
    if (count == 0 || count > 18 || (count > 1 && *digits == '0')) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (negative)
      out = -static_cast<int64_t>(number);
    else
      out = number;
    return true;
  }
};

}  // namespace

std::string parse_answer_line(const std::string& line, json& out) {
  if (line.size() > limits::kMaxLineBytes)
    return "is longer than the input limit of " + std::to_string(limits::kMaxLineBytes) + " bytes";
  if (!PlainJson(line).parse(out)) {
    // Before nlohmann builds a tree: a deep tree would overflow the stack when copied or printed.
    if (auto breach = limits::find_json_limit_breach(line)) {
      out = json();
      return "breaks an input limit (" + breach->problem + ")";
    }
    out = json::parse(line, nullptr, false);
  }
  if (out.is_discarded() || !out.is_object()) {
    out = json();
    return "is not a JSON object";
  }
  return "";
}

}  // namespace kemit::driver
