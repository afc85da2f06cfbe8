#include "util/json_fields.hpp"

#include "util/input_bounds.hpp"

namespace preflight::json_fields {

namespace {

// The field, or nullptr when `object` is not an object or lacks it.
const json* field(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

std::string text(const json& object, const char* key) {
  const json* value = field(object, key);
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

int integer(const json& object, const char* key, int fallback) {
  const json* value = field(object, key);
  return value && value->is_number_integer() ? value->get<int>() : fallback;
}

double number(const json& object, const char* key) {
  const json* value = field(object, key);
  return value && value->is_number() ? value->get<double>() : 0.0;
}

bool flag(const json& object, const char* key) {
  const json* value = field(object, key);
  return value && value->is_boolean() && value->get<bool>();
}

const json& list(const json& object, const char* key) {
  static const json empty = json::array();
  const json* value = field(object, key);
  return value && value->is_array() ? *value : empty;
}

std::vector<std::string> strings(const json& object, const char* key) {
  std::vector<std::string> out;
  for (const json& item : list(object, key))
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

std::optional<std::size_t> nesting_beyond(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (in_string) {
      if (c == '\\')
        ++at;  // past the escaped character, a quote among them
      else
        in_string = c != '"';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return at;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

json parse_bounded(std::string_view text) {
  if (nesting_beyond(text, kMaxNesting)) return json(json::value_t::discarded);
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace preflight::json_fields
