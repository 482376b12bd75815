// Internal: the streaming, strict shard reader. It turns nlohmann's SAX events straight into a
// Shard (no DOM: a DOM of 100,000 entries costs seconds), refusing duplicate keys, unknown
// fields and wrong types at the line where they occur.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_position.h"
#include "kemit/golden/shard.h"

namespace kemit::golden::detail {

// Where a value sits in the shard; decides which keys and value types are allowed.
enum class Scope {
  top, flavor_list, counters, counter_sections, counter_section, counter_arch,
  entries, entry, canonical, ll, flavor_section, resources, isa, isa_counts,
};

struct Frame {
  Scope scope;
  std::string name;               // the key (or flavor, section, arch) this container is under
  std::size_t offset = 0;         // where it opened (turned into a line only for messages)
  std::vector<std::string> keys;  // keys seen so far (a linear scan: objects are small)
};

// A scalar as the SAX parser delivers it.
struct Scalar {
  enum Kind { null, boolean, negative, unsigned_int, floating, string } kind;
  std::uint64_t number = 0;           // unsigned_int; boolean as 0/1
  std::string* text = nullptr;  // string (moved out when stored); floating and negative: as written
  std::string describe() const;       // how it looked, for messages (computed only on errors)
};

class ShardSaxReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  ShardSaxReader(const std::string& label, const std::string& family, const LineIndex& lines, const char* begin,
                 const char** cursor);

  bool null() override;
  bool boolean(bool v) override;
  bool number_integer(number_integer_t v) override;
  bool number_unsigned(number_unsigned_t v) override;
  bool number_float(number_float_t v, const string_t& text) override;
  bool string(string_t& v) override;
  bool binary(binary_t&) override;
  bool start_object(std::size_t) override;
  bool end_object() override;
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool key(string_t& key) override;
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override;

  // After sax_parse: throws the recorded JSON syntax error, or returns the shard.
  Shard finish(bool check_counters);

  [[noreturn]] void fail(std::size_t line, const std::string& problem) const;
  [[noreturn]] void fail_with(std::size_t line, const std::string& problem, const std::string& remedy) const;
  std::size_t current_line() const;

 private:
  void open(Scope scope, const std::string& name);
  Scope child_scope(bool is_object) const;
  void on_scalar(const Scalar& value);
  void set_top_field(const std::string& key, const Scalar& value);
  void set_entry_field(const std::string& key, const Scalar& value);
  void set_section_field(Section& section, const std::string& key, const Scalar& value);
  void close_object();
  void close_entry();
  void close_flavor_section();
  void check_required(const Frame& frame, std::initializer_list<const char*> required) const;
  std::string json_path() const;                 // "entries[0].canonical", for duplicate keys
  std::string field(const std::string& key) const;  // "entry id 1 canonical.sha256", "counters.configs"
  std::string container_label() const;              // "entry id 1 ll.llvm19", "the header", ...
  std::string entry_label() const;
  bool is_known_key(const Frame& frame, const std::string& key) const;

  std::uint64_t count_value(const Scalar& v, const std::string& key) const;
  std::string text_value(const Scalar& v, const std::string& key) const;
  std::string sha_value(const Scalar& v, const std::string& key) const;
  std::size_t line_of(const Frame& frame) const { return lines_.line_of_offset(frame.offset); }
  std::size_t current_offset() const;

  const std::string& label_;
  const std::string& family_;
  const LineIndex& lines_;
  const char* begin_;
  const char** cursor_;
  std::vector<Frame> frames_;
  Shard shard_;
  Counters stored_counters_;
  Entry entry_;                  // the entry being read
  std::size_t entry_index_ = 0;  // its position in "entries"
  Section* section_ = nullptr;   // the section being read (canonical or a flavor)
  std::string number_text_;      // a negative or fractional number, kept for the error message
  std::size_t counters_line_ = 0;
  bool failed_ = false;
  std::size_t error_offset_ = 0;
  std::string error_text_;
};

}  // namespace kemit::golden::detail
