// The engine protocol (docs/protocol.md): one JSON request per line in, one response out.
// Mirrors py_engine/kemit/serve.py. Part of the kemit_emit CLI, not of the library.
#pragma once
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace kemit::serve {

constexpr int PROTOCOL = 1;

// The text Python's str() gives a decoded JSON value (strings bare; None, True, 1.5, [...]),
// so that messages about odd request fields read the same from both engines.
std::string python_str(const nlohmann::json& value);
// One request line as Python's json.loads reads it: an integer too wide for 64 bits stays an
// integer (clamped, so "must fit in 32 bits" still applies) instead of becoming a fraction.
// Throws nlohmann::json::parse_error.
nlohmann::json parse_line(const std::string& line);
// The response object for one decoded request.
nlohmann::json respond(const nlohmann::json& request);
int serve(std::istream& in, std::ostream& out);

}  // namespace kemit::serve
