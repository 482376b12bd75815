#include "decode_answer.h"

#include <algorithm>

#include "kemit/driver/canonical_section.h"
#include "kemit/input_limits.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

DecodedAnswer failed(Verdict verdict, std::string problem) {
  DecodedAnswer decoded;
  decoded.failure = verdict;
  decoded.problem = std::move(problem);
  return decoded;
}

std::string excerpt(const json& value) {
  return limits::cut_text(value.dump(-1, ' ', false, json::error_handler_t::replace), 300);
}

// The "ll" object: one entry per requested flavor, each with exactly one of text / rejected.
std::string decode_ll(const json& ll, const std::vector<std::string>& flavors, DecodedAnswer& decoded) {
  if (!ll.is_object()) return "'ll' must be an object";
  for (const auto& item : ll.items())
    if (std::find(flavors.begin(), flavors.end(), item.key()) == flavors.end())
      return "'ll' has flavor '" + item.key() + "', which was not requested";
  for (const auto& flavor : flavors) {
    if (!ll.contains(flavor)) return "'ll' lacks the requested flavor '" + flavor + "'";
    const json& section = ll[flavor];
    if (!section.is_object() || section.size() != 1)
      return "ll." + flavor + " must hold exactly one of 'text' or 'rejected'";
    bool rejected = section.contains("rejected");
    const char* key = rejected ? "rejected" : "text";
    // A reference into the response, never a temporary: the decoded section is a view of it.
    if (!section.contains(key) || !section[key].is_string())
      return "ll." + flavor + " must hold exactly one of 'text' or 'rejected', a string";
    const json& content = section[key];
    decoded.ll[flavor] = {rejected, content.get_ref<const std::string&>()};
  }
  return "";
}

}  // namespace

DecodedAnswer decode_answer(const Answer& answer, const std::string& engine, const std::vector<std::string>& flavors) {
  if (answer.kind == AnswerKind::timeout) return failed(Verdict::timeout, answer.detail);
  if (answer.kind == AnswerKind::crash) return failed(Verdict::crash, answer.detail);
  const json& response = answer.response;
  std::string malformed = "the " + engine + " engine's answer is malformed (";
  if (!response.contains("status") || !response["status"].is_string())
    return failed(Verdict::crash, malformed + "no string 'status'): " + excerpt(response));
  std::string status = response["status"].get<std::string>();
  if (status == "error")
    return failed(Verdict::crash, "the " + engine + " engine answered error: " +
                                      (response.contains("error") ? excerpt(response["error"]) : "(no 'error' text)"));
  DecodedAnswer decoded;
  if (status == "rejected") {
    if (!response.contains("reason") || !response["reason"].is_string())
      return failed(Verdict::crash, malformed + "a rejection needs a string 'reason'): " + excerpt(response));
    decoded.kind = DecodedAnswer::Kind::rejected;
    decoded.reason = response["reason"].get<std::string>();
    return decoded;
  }
  if (status != "ok")
    return failed(Verdict::crash, "the " + engine + " engine answered unknown status '" + status + "': " + excerpt(response));
  for (const char* field : {"kernel_name", "canonical"})
    if (!response.contains(field) || !response[field].is_string())
      return failed(Verdict::crash, malformed + "no string '" + field + "'): " + excerpt(response));
  if (response.contains("plan") && !response["plan"].is_string())
    return failed(Verdict::crash, malformed + "'plan' must be a string): " + excerpt(response));
  if (!response.contains("ll")) return failed(Verdict::crash, malformed + "no 'll'): " + excerpt(response));
  std::string problem = decode_ll(response["ll"], flavors, decoded);
  if (!problem.empty()) return failed(Verdict::crash, malformed + problem + "): " + excerpt(response));
  decoded.kind = DecodedAnswer::Kind::ok;
  decoded.kernel_name = response["kernel_name"].get<std::string>();
  decoded.canonical = canonical_section(response);
  return decoded;
}

}  // namespace kemit::driver
