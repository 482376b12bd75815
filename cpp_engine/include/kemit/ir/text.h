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
    copy(end_, data, size);
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
  // Room for `more` bytes after the end: the unchecked writes of append_digits follow it.
  [[gnu::always_inline]] void reserve_more(size_t more) {
    if (more > static_cast<size_t>(capacity_end_ - end_)) grow(more);
  }
  // Empties the text and keeps the capacity (a buffer reused from one module to the next).
  void clear() { end_ = begin_; }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  std::string_view view() const { return std::string_view(begin_, size()); }
  std::string str() const { return std::string(begin_, size()); }

  // Python's str(int): the digits of `number` appended to `out` (a std::string or a TextBuffer).
  template <typename Out>
  static void append_number(Out& out, int64_t number, std::string_view prefix = {}) {
    out.append(prefix.data(), prefix.size());
    char digits[24];
    out.append(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, number).ptr - digits));
  }
  // A TextBuffer writes the digits in place (no copy through a stack array); the numbers a
  // module holds (value ids, lanes, offsets) are mostly below 10000: those are spelled from a
  // table of digit pairs, without std::to_chars' loops.
  // `prefix` (at most 8 bytes: "%", "%v") goes first, under the same room check.
  [[gnu::always_inline]] static void append_number(TextBuffer& out, int64_t number, std::string_view prefix = {}) {
    out.reserve_more(32);
    copy(out.end_, prefix.data(), prefix.size());
    out.end_ += prefix.size();
    if (number >= 0 && number < 10000)
      out.end_ = small_digits(out.end_, static_cast<uint32_t>(number));
    else
      out.end_ = std::to_chars(out.end_, out.end_ + 24, number).ptr;
  }

 private:
  // The digits of n < 10000 written at `to`; returns their end.
  [[gnu::always_inline]] static char* small_digits(char* to, uint32_t n) {
    static constexpr char PAIRS[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    if (n < 10) {
      *to = static_cast<char>('0' + n);
      return to + 1;
    }
    if (n < 100) {
      std::memcpy(to, PAIRS + 2 * n, 2);
      return to + 2;
    }
    if (n < 1000) {
      *to = static_cast<char>('0' + n / 100);
      std::memcpy(to + 1, PAIRS + 2 * (n % 100), 2);
      return to + 3;
    }
    std::memcpy(to, PAIRS + 2 * (n / 100), 2);
    std::memcpy(to + 2, PAIRS + 2 * (n % 100), 2);
    return to + 4;
  }
  // The first and the last sizeof(Word) bytes (they overlap when size < 2 * sizeof(Word)).
  template <typename Word>
  [[gnu::always_inline]] static void copy_ends(char* to, const char* from, size_t size) {
    Word head, tail;
    std::memcpy(&head, from, sizeof head);
    std::memcpy(&tail, from + size - sizeof tail, sizeof tail);
    std::memcpy(to, &head, sizeof head);
    std::memcpy(to + size - sizeof tail, &tail, sizeof tail);
  }
  // memcpy, with the short copies most pieces are (a name, ", ", a type) done inline: a call into
  // the library costs more than the copy itself. Overlapping loads and stores cover every size.
  [[gnu::always_inline]] static void copy(char* to, const char* from, size_t size) {
    if (__builtin_constant_p(size) || size > 16) {
      // An empty piece may come with a null `from` (an empty view), which memcpy must not get
      // even for 0 bytes (UndefinedBehaviorSanitizer); for a constant size the test folds away.
      if (size) std::memcpy(to, from, size);
    } else if (size >= 8) {
      copy_ends<uint64_t>(to, from, size);
    } else if (size >= 4) {
      copy_ends<uint32_t>(to, from, size);
    } else if (size) {
      to[0] = from[0];
      to[size / 2] = from[size / 2];
      to[size - 1] = from[size - 1];
    }
  }

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
