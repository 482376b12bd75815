#include "kemit/driver/strict_json.h"

#include <unordered_set>

namespace kemit::driver {
namespace {

// One open object or array while parsing. It keeps only its own key or index, never its full
// path: a path string per container made loading quadratic in the nesting depth. The path is
// built from the stack only when a duplicate is found.
struct OpenContainer {
  bool is_object = false;
  std::unordered_set<std::string> keys;  // keys seen so far (a set: objects may hold many keys)
  std::string last_key;
  size_t next_index = 0;  // arrays: index of the element being parsed
};

// "configs[3].spec" for the container on top of the stack ("" for the top level).
std::string path_of(const std::vector<OpenContainer>& stack) {
  std::string path;
  for (size_t i = 0; i + 1 < stack.size(); ++i) {
    const OpenContainer& parent = stack[i];
    if (!parent.is_object) path += "[" + std::to_string(parent.next_index) + "]";
    else path += (path.empty() ? "" : ".") + parent.last_key;
  }
  return path;
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
        stack.emplace_back();
        stack.back().is_object = event == Event::object_start;
        break;
      }
      case Event::key: {
        OpenContainer& object = stack.back();
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!object.keys.insert(key).second) result.duplicates.push_back({path_of(stack), key});
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
