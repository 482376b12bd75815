#include "kemit/driver/strict_json.h"

namespace kemit::driver {
namespace {

// One open object or array while parsing; it knows its own path for messages.
struct OpenContainer {
  bool is_object = false;
  std::string path;
  std::vector<std::string> keys;  // keys seen so far (objects in configs are small)
  std::string last_key;
  size_t next_index = 0;  // arrays: index of the element being parsed
};

std::string child_path(const std::vector<OpenContainer>& stack) {
  if (stack.empty()) return "";
  const OpenContainer& parent = stack.back();
  if (!parent.is_object) return parent.path + "[" + std::to_string(parent.next_index) + "]";
  return parent.path.empty() ? parent.last_key : parent.path + "." + parent.last_key;
}

void finish_element(std::vector<OpenContainer>& stack) {
  if (!stack.empty() && !stack.back().is_object) ++stack.back().next_index;
}

}  // namespace

StrictParse parse_json_detecting_duplicates(const std::string& text) {
  using Event = nlohmann::json::parse_event_t;
  StrictParse result;
  std::vector<OpenContainer> stack;
  auto callback = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        OpenContainer opened;
        opened.is_object = event == Event::object_start;
        opened.path = child_path(stack);
        stack.push_back(std::move(opened));
        break;
      }
      case Event::key: {
        OpenContainer& object = stack.back();
        std::string key = parsed.get<std::string>();
        for (const auto& seen : object.keys)
          if (seen == key) result.duplicates.push_back({object.path, key});
        object.keys.push_back(key);
        object.last_key = key;
        break;
      }
      case Event::object_end:
      case Event::array_end:
        stack.pop_back();
        finish_element(stack);
        break;
      case Event::value:
        finish_element(stack);
        break;
    }
    return true;
  };
  result.value = nlohmann::json::parse(text, callback);
  return result;
}

}  // namespace kemit::driver
