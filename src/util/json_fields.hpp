// Fields of JSON that another process wrote (the harness's events, the image's scanners, an
// image's manifests): such input is untrusted, so a missing field or one of another type reads
// as the empty value (or the fallback) and never throws.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::json_fields {

using nlohmann::json;

std::string text(const json& object, const char* key);  // "" unless a string
int integer(const json& object, const char* key, int fallback = 0);
double number(const json& object, const char* key);     // 0 unless a number
bool flag(const json& object, const char* key);         // false unless true
const json& list(const json& object, const char* key);  // an empty array unless an array
// The strings of the field's array (other items skipped).
std::vector<std::string> strings(const json& object, const char* key);

// The offset of the first "[" or "{" in `text` nested more than `max_depth` deep, if one is: JSON
// to refuse before nlohmann::json parses it, which crashed on 100,000 levels. One pass; a
// string's brackets are not counted.
std::optional<std::size_t> nesting_beyond(std::string_view text, int max_depth);

// `text` as JSON, or a discarded value (is_discarded()) when it is not JSON or nests deeper
// than kMaxNesting (util/input_bounds.hpp): how JSON that a job, an image or a job file wrote
// is parsed.
json parse_bounded(std::string_view text);

}  // namespace preflight::json_fields
