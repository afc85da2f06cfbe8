// A failure category as the rules file describes it (policies/rules/failures.yaml): the name
// findings carry, and the texts a user or a code-scanning tool reads about it.
#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace preflight::model {

struct Category {
  std::string name;         // "Path Not Found"
  std::string id;           // "path-not-found"
  std::string dimension;    // one of the study's four dimensions
  std::string description;  // a paragraph
  std::string fix;          // how it is usually fixed
  SourceLocation where;     // where the rules file describes it
};

// "Path Not Found" → "path-not-found".
std::string category_id(std::string_view name);

}  // namespace preflight::model
