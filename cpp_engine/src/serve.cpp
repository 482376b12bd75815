// The engine protocol (docs/protocol.md): one JSON request per line in, one response out.
// Mirrors py_engine/kemit/serve.py: errors are responses, never crashes; one line out per
// line in, flushed at once, so a pipelining driver never waits on a buffer.
#include "serve.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <limits>
#include <ostream>
#include <vector>

#include "kemit/engine.h"
#include "kemit/families/registry.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/ir/parser.h"
#include "kemit/ir/types.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"
#include "kemit/target/arch.h"

namespace kemit::serve {

using nlohmann::json;

namespace {

// Python's repr() of a str: single quotes unless the text holds ' and no ".
std::string python_repr_text(const std::string& text) {
  char quote = text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : text) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      const char* digits = "0123456789abcdef";
      out += std::string("\\x") + digits[c >> 4] + digits[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

std::string python_repr(const json& value) {
  if (value.is_string()) return python_repr_text(value.get<std::string>());
  if (value.is_array()) {
    std::string out;
    for (const auto& item : value) out += (out.empty() ? "" : ", ") + python_repr(item);
    return "[" + out + "]";
  }
  if (value.is_object()) {  // sorted keys here, insertion order in Python: a known difference
    std::string out;
    for (const auto& item : value.items())
      out += (out.empty() ? "" : ", ") + python_repr_text(item.key()) + ": " + python_repr(item.value());
    return "{" + out + "}";
  }
  return python_str(value);
}

// Python's type(value).__name__ for a decoded JSON value.
std::string python_type_name(const json& value) {
  if (value.is_boolean()) return "bool";
  if (value.is_number_float()) return "float";
  if (value.is_number()) return "int";
  if (value.is_string()) return "str";
  if (value.is_array()) return "list";
  if (value.is_object()) return "dict";
  return "NoneType";
}

// A SAX handler that builds the document like nlohmann's own, except for integer literals
// beyond 64 bits, which Python keeps as integers.
class RequestSax {
 public:
  explicit RequestSax(json& result) : dom_(result, true) {}
  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(json::number_float_t value, const std::string& lexeme) {
    if (lexeme.find_first_of(".eE") != std::string::npos) return dom_.number_float(value, lexeme);
    if (lexeme[0] == '-') return dom_.number_integer(std::numeric_limits<int64_t>::min());
    return dom_.number_unsigned(std::numeric_limits<uint64_t>::max());
  }
  bool string(std::string& value) { return dom_.string(value); }
  bool binary(json::binary_t& value) { return dom_.binary(value); }
  bool start_object(std::size_t size) { return dom_.start_object(size); }
  bool key(std::string& value) { return dom_.key(value); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t size) { return dom_.start_array(size); }
  bool end_array() { return dom_.end_array(); }
  template <class Exception>  // the concrete type, so that it is thrown as a json::parse_error
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
};

// The names Python iterates over in `for name in flavors`; TypeError when it cannot.
std::vector<std::string> flavor_list(const json& flavors) {
  std::vector<std::string> names;
  if (flavors.is_array()) {
    for (const auto& item : flavors) names.push_back(python_str(item));
  } else if (flavors.is_object()) {
    for (const auto& item : flavors.items()) names.push_back(item.key());
  } else if (flavors.is_string()) {
    std::string text = flavors.get<std::string>();
    for (size_t i = 0; i < text.size();) {  // one UTF-8 code point at a time
      size_t length = 1;
      while (i + length < text.size() && (static_cast<unsigned char>(text[i + length]) & 0xC0) == 0x80) ++length;
      names.push_back(text.substr(i, length));
      i += length;
    }
  } else {
    throw std::runtime_error("TypeError: '" + python_type_name(flavors) + "' object is not iterable");
  }
  return names;
}

// Python's "<ExceptionName>: <message>" for an exception escaping the engine.
std::string error_text(const std::exception_ptr& caught) {
  try {
    std::rethrow_exception(caught);
  } catch (const llvm::UnknownFlavor& error) {
    return std::string("UnknownFlavor: ") + error.what();
  } catch (const ir::BuildError& error) {
    return std::string("BuildError: ") + error.what();
  } catch (const ir::TypeError& error) {
    return std::string("TypeError_: ") + error.what();
  } catch (const llvm::LowerError& error) {
    return std::string("LowerError: ") + error.what();
  } catch (const std::invalid_argument& error) {
    return std::string("ValueError: ") + error.what();
  } catch (const std::runtime_error& error) {  // already named (flavor_list's TypeError)
    return error.what();
  } catch (const std::exception& error) {
    return std::string("RuntimeError: ") + error.what();
  }
}

json emit_response(const json& request_id, const json& request) {
  for (const char* field : {"family", "arch", "spec", "flavors"})
    if (!request.contains(field))
      return {{"id", request_id}, {"status", "error"}, {"error", std::string("request lacks field '") + field + "'"}};
  json range = request.value("buffer_range", json(0));
  bool positive = range.is_number_unsigned() ? range.get<uint64_t>() >= 1
                                             : range.is_number_integer() && range.get<int64_t>() >= 1;
  if (!positive && request.contains("buffer_range"))
    return {{"id", request_id},
            {"status", "error"},
            {"error", "request field 'buffer_range' must be a positive integer (bytes; test-only)"}};
  EmitResult result;
  try {
    const json& family = request["family"];
    if (family.is_array() || family.is_object())
      throw std::runtime_error("TypeError: unhashable type: '" + python_type_name(family) + "'");
    result = emit(python_str(family), python_str(request["arch"]), request["spec"], flavor_list(request["flavors"]),
                  range.get<uint64_t>());
  } catch (...) {  // a bug or a malformed request: reported, never fatal
    return {{"id", request_id}, {"status", "error"}, {"error", error_text(std::current_exception())}};
  }
  if (result.rejected) return {{"id", request_id}, {"status", "rejected"}, {"reason", std::move(result.reason)}};
  // The texts move into the answer: a full gate's are some 64 MB, copied for nothing before.
  json ll = json::object();
  for (auto& section : result.ll)
    ll[section.flavor] =
        section.rejected ? json{{"rejected", std::move(section.reason)}} : json{{"text", std::move(section.text)}};
  return {{"id", request_id},
          {"status", "ok"},
          {"kernel_name", std::move(result.kernel_name)},
          {"canonical", std::move(result.canonical)},
          {"plan", std::move(result.plan)},
          {"ll", std::move(ll)}};
}

// The bytes an ASCII JSON string holds as they are (no escape, no UTF-8 question): one lookup a
// byte instead of four comparisons.
constexpr std::array<bool, 256> kPlainBytes = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

bool is_plain_byte(unsigned char c) { return kPlainBytes[c]; }

// The answer line, byte for byte what response.dump(-1, ' ', false, replace) writes, without
// nlohmann's per-character UTF-8 state machine for the long ASCII texts (the IR): an ASCII string
// is escaped here, a run of plain bytes at a time through pointers (byte by byte by index, it
// cost 20 instructions a byte under callgrind, a third of the worker's); any other string, and
// every non-string scalar, is still nlohmann's.
void write_string(std::string& out, const std::string& text) {
  size_t start = out.size();
  out.reserve(start + text.size() + 2);
  out += '"';
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p < end;) {
    const char* run = p;
    while (p < end && is_plain_byte(static_cast<unsigned char>(*p))) ++p;
    out.append(run, static_cast<size_t>(p - run));
    if (p == end) break;
    auto c = static_cast<unsigned char>(*p++);
    if (c >= 0x80) {  // non-ASCII: nlohmann's own escaping (and its replacement of bad UTF-8)
      out.resize(start);
      out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
      return;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      }
    }
  }
  out += '"';
}

void write_json(std::string& out, const json& value) {
  if (value.is_string()) return write_string(out, value.get_ref<const std::string&>());
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (auto item = value.begin(); item != value.end(); ++item) {  // sorted by key, as dump() writes
      if (!first) out += ',';
      first = false;
      write_string(out, item.key());
      out += ':';
      write_json(out, item.value());
    }
    out += '}';
    return;
  }
  if (value.is_array()) {
    out += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i) out += ',';
      write_json(out, value[i]);
    }
    out += ']';
    return;
  }
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
}

}  // namespace

std::string python_str(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "None";
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_number_float()) return ir::float_repr(value.get<double>());
  if (value.is_number()) return value.dump();
  return python_repr(value);
}

json parse_line(const std::string& line) {
  json result;
  RequestSax sax(result);
  json::sax_parse(line, &sax);
  return result;
}

// What the engine serves: families, flavors (with the facts the LLVM lane checks a module
// against) and processors (with the facts the numerics lane sizes a launch and encodes fp8 inputs
// by and the fuzzer's domains judge a spec by), so that no harness tool needs the engine's tables.
json hello_response(const json& request_id) {
  json facts = json::array();
  for (const auto& flavor : llvm::flavors())
    facts.push_back({{"name", flavor.name},
                     {"major", flavor.major},
                     {"datalayout", flavor.datalayout},
                     {"processors", flavor.processors}});
  json arch_facts = json::array();
  for (const auto& arch : target::archs())
    arch_facts.push_back({{"name", arch.name},
                          {"wave_size", arch.wave_size},
                          {"lds_bytes", arch.lds_bytes},
                          {"mma", arch.mma},
                          {"fp8_format", arch.fp8_format},
                          {"max_block_lanes", arch.max_block_lanes},
                          {"max_grid_lanes", arch.max_grid_lanes},
                          {"buffer_range", arch.buffer_range}});
  return {{"id", request_id},         {"status", "ok"},
          {"engine", "cpp"},          {"protocol", PROTOCOL},
          {"families", family_names()}, {"flavors", llvm::flavor_names()},
          {"arches", target::arch_names()}, {"flavor_facts", facts},
          {"arch_facts", arch_facts}};
}

// The parse_spec op: a family's spec with every default filled in (what the family builds from),
// or the refusal emit gives for it; an unknown family is an error, as in emit.
json parse_spec_response(const json& request_id, const json& request) {
  for (const char* field : {"family", "spec"})
    if (!request.contains(field))
      return {{"id", request_id}, {"status", "error"}, {"error", std::string("request lacks field '") + field + "'"}};
  try {
    const json& family = request["family"];
    if (family.is_array() || family.is_object())
      throw std::runtime_error("TypeError: unhashable type: '" + python_type_name(family) + "'");
    const families::Family& module = families::find_family(python_str(family));
    return {{"id", request_id}, {"status", "ok"}, {"spec", module.parse_spec(request["spec"])}};
  } catch (const families::SpecError& refusal) {
    return {{"id", request_id}, {"status", "rejected"}, {"reason", refusal.reason}};
  } catch (...) {  // a bug or a malformed request: reported, never fatal
    return {{"id", request_id}, {"status", "error"}, {"error", error_text(std::current_exception())}};
  }
}

// The resolve_flavor op: a flavor name as a user typed it (an alias such as llvm23 included)
// -> the canonical name and the note the CLIs print, or the error they print.
json resolve_flavor_response(const json& request_id, const json& request) {
  if (!request.contains("name") || !request["name"].is_string())
    return {{"id", request_id}, {"status", "error"}, {"error", "request field 'name' must be a string"}};
  try {
    auto [flavor, note] = llvm::resolve_flavor(request["name"].get<std::string>());
    return {{"id", request_id}, {"status", "ok"}, {"flavor", flavor->name}, {"note", note}};
  } catch (const llvm::UnknownFlavor& error) {
    return {{"id", request_id}, {"status", "error"}, {"error", error.what()}};
  }
}

// The lower op: parse a canonical text (one kernel or a module) and lower it at each flavor, with
// no gate (the driver's cross-lowering triage asks only for flavors both engines emitted).
json lower_response(const json& request_id, const json& request) {
  try {
    if (!request.contains("canonical")) return {{"id", request_id}, {"status", "error"}, {"error", "request lacks field 'canonical'"}};
    if (!request.contains("flavors")) return {{"id", request_id}, {"status", "error"}, {"error", "request lacks field 'flavors'"}};
    std::vector<ir::Kernel> kernels = ir::parse_module(request["canonical"].get<std::string>());
    std::vector<std::reference_wrapper<const ir::Kernel>> refs(kernels.begin(), kernels.end());
    json ll = json::object();
    for (const auto& name : request["flavors"]) {
      const llvm::Flavor& flavor = llvm::find_flavor(name.get<std::string>());
      ll[flavor.name] = {{"text", llvm::lower_module(refs, flavor)}};
    }
    return {{"id", request_id}, {"status", "ok"}, {"ll", ll}};
  } catch (const std::exception& error) {
    return {{"id", request_id}, {"status", "error"}, {"error", error.what()}};
  }
}

json respond(const json& request) {
  if (!request.is_object()) return {{"id", nullptr}, {"status", "error"}, {"error", "request must be a JSON object"}};
  json request_id = request.value("id", json());
  json op = request.value("op", json("emit"));
  if (op == "hello") return hello_response(request_id);
  if (op == "lower") return lower_response(request_id, request);
  if (op == "resolve_flavor") return resolve_flavor_response(request_id, request);
  if (op == "parse_spec") return parse_spec_response(request_id, request);
  if (op != "emit") return {{"id", request_id}, {"status", "error"}, {"error", "unknown op '" + python_str(op) + "'"}};
  return emit_response(request_id, request);
}

int serve(std::istream& in, std::ostream& out) {
  std::string line, text;  // text keeps its room from one answer to the next
  while (std::getline(in, line)) {
    if (is_blank(line)) continue;
    json response;
    try {
      response = respond(parse_line(line));
    } catch (const json::exception& error) {
      response = {{"id", nullptr}, {"status", "error"}, {"error", std::string("malformed request line: ") + error.what()}};
    }
    text.clear();
    write_json(text, response);
    text += '\n';
    out << text;
    out.flush();
  }
  return 0;
}

}  // namespace kemit::serve
