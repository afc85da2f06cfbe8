// Fields of JSON that another process wrote (the harness's events, the image's scanners, an
// image's manifests): such input is untrusted, so a missing field or one of another type reads
// as the empty value (or the fallback) and never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
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

}  // namespace preflight::json_fields
