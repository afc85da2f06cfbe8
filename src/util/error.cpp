#include "util/error.hpp"

namespace preflight {

std::string SourceLocation::str() const {
  if (file.empty()) return {};
  std::string out = file.string();
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Error::str() const {
  std::string place = where.str();
  return place.empty() ? message : place + ": " + message;
}

}  // namespace preflight
