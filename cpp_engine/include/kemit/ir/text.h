// C++ only (no Python counterpart): the text the printer and the lowering write, line by line.
//
// Python builds each line with an f-string and joins the list of lines at the end. C++ appends
// every piece of every line to one growing buffer instead. std::string::append is a call into
// the library for each piece (most pieces are a few bytes: "%v12", ", ", "i32"), so this buffer
// keeps its own end and appends in place; the text leaves it once, as a std::string (str()).
#pragma once
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace kemit::ir {

class TextBuffer {
 public:
  explicit TextBuffer(size_t capacity = 4096) { grow(capacity); }
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;
  TextBuffer(TextBuffer&& other) noexcept : begin_(other.begin_), end_(other.end_), capacity_end_(other.capacity_end_) {
    other.begin_ = other.end_ = other.capacity_end_ = nullptr;
  }
  TextBuffer& operator=(TextBuffer&&) = delete;
  ~TextBuffer() { std::free(begin_); }

  // Inlined into every caller: a piece's size is then mostly a constant and the copy a move or two.
  [[gnu::always_inline]] void append(const char* data, size_t size) {
    if (size > static_cast<size_t>(capacity_end_ - end_)) grow(size);
    std::memcpy(end_, data, size);
    end_ += size;
  }
  [[gnu::always_inline]] TextBuffer& operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  [[gnu::always_inline]] TextBuffer& operator+=(char c) {
    if (end_ == capacity_end_) grow(1);
    *end_++ = c;
    return *this;
  }
  // Decimal digits, as Python's str(int) spells them.
  // count copies of c (an indent).
  void append(size_t count, char c) {
    if (count > static_cast<size_t>(capacity_end_ - end_)) grow(count);
    std::memset(end_, c, count);
    end_ += count;
  }
  // text put at byte offset `at` (Python: lines[at:at] = [...]); what followed moves after it.
  void insert(size_t at, std::string_view text) {
    if (text.size() > static_cast<size_t>(capacity_end_ - end_)) grow(text.size());
    std::memmove(begin_ + at + text.size(), begin_ + at, size() - at);
    std::memcpy(begin_ + at, text.data(), text.size());
    end_ += text.size();
  }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  std::string_view view() const { return std::string_view(begin_, size()); }
  std::string str() const { return std::string(begin_, size()); }

  // Python's str(int): the digits of `number` appended to `out` (a std::string or a TextBuffer).
  template <typename Out>
  static void append_number(Out& out, int64_t number) {
    char digits[24];
    out.append(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, number).ptr - digits));
  }

 private:
  [[gnu::noinline]] void grow(size_t more) {
    size_t used = size();
    size_t capacity = static_cast<size_t>(capacity_end_ - begin_);
    size_t wanted = std::max(used + more, capacity ? 2 * capacity : size_t{4096});
    char* bigger = static_cast<char*>(std::realloc(begin_, wanted));
    if (!bigger) throw std::bad_alloc();
    begin_ = bigger;
    end_ = bigger + used;
    capacity_end_ = bigger + wanted;
  }

  char* begin_ = nullptr;
  char* end_ = nullptr;
  char* capacity_end_ = nullptr;
};

}  // namespace kemit::ir
