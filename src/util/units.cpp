#include "util/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "util/text.hpp"

namespace preflight {

namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Binary suffixes as Kubernetes ("16Gi"), decimal upper-case ones as Kubernetes ("1G"), and
// Docker's lower-case single letters ("2g" for --shm-size), which Docker reads as binary.
constexpr Unit kSizeUnits[] = {
    {"", 1},
    {"B", 1},
    {"b", 1},
    {"Ki", 1024.0},
    {"KiB", 1024.0},
    {"k", 1024.0},
    {"kb", 1024.0},
    {"Mi", 1048576.0},
    {"MiB", 1048576.0},
    {"m", 1048576.0},
    {"mb", 1048576.0},
    {"Gi", 1073741824.0},
    {"GiB", 1073741824.0},
    {"g", 1073741824.0},
    {"gb", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"TiB", 1099511627776.0},
    {"t", 1099511627776.0},
    {"K", 1e3},
    {"KB", 1e3},
    {"M", 1e6},
    {"MB", 1e6},
    {"G", 1e9},
    {"GB", 1e9},
    {"T", 1e12},
    {"TB", 1e12},
};

constexpr Unit kDurationUnits[] = {
    {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000},
};

// A non-negative decimal number at the start of `text`; advances past it.
bool take_number(std::string_view& text, double& value) {
  std::size_t n = 0;
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.')) {
    ++n;
  }
  if (n == 0) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + n, value);
  if (ec != std::errc() || end != text.data() + n) return false;
  text.remove_prefix(n);
  return true;
}

}  // namespace

Result<std::uint64_t> parse_size(const std::string& text) {
  const Error bad =
      Error::bad_input("expected a size such as \"16Gi\", \"64Mi\" or \"1G\", got \"" + text + "\"");
  std::string_view rest = trim_view(text);
  double number = 0;
  if (!take_number(rest, number)) return bad;
  for (const Unit& unit : kSizeUnits) {
    if (rest != unit.suffix) continue;
    const double bytes = std::round(number * unit.factor);
    if (bytes >= 18446744073709551615.0) {
      return Error::bad_input("size \"" + text + "\" is too large");
    }
    return static_cast<std::uint64_t>(bytes);
  }
  return bad;
}

Result<std::chrono::milliseconds> parse_duration(const std::string& text) {
  const Error bad =
      Error::bad_input("expected a duration such as \"10m\", \"90s\" or \"1h30m\", got \"" + text + "\"");
  std::string_view rest = trim_view(text);
  if (rest.empty()) return bad;
  double total = 0;
  while (!rest.empty()) {
    double number = 0;
    if (!take_number(rest, number)) return bad;
    std::size_t n = 0;
    while (n < rest.size() && std::isalpha(static_cast<unsigned char>(rest[n]))) ++n;
    const std::string_view suffix = rest.substr(0, n);
    rest.remove_prefix(n);
    const Unit* found = nullptr;
    for (const Unit& unit : kDurationUnits) {
      if (suffix == unit.suffix) found = &unit;
    }
    if (found == nullptr) return bad;
    total += number * found->factor;
  }
  if (total > static_cast<double>(std::numeric_limits<std::int64_t>::max()) / 2) {
    return Error::bad_input("duration \"" + text + "\" is too long");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total)));
}

std::string duration_text(std::chrono::seconds duration) {
  long long left = std::max<long long>(0, duration.count());
  if (left == 0) return "0s";
  std::string out;
  for (const auto& [suffix, size] : {std::pair{"d", 86400LL}, {"h", 3600LL}, {"m", 60LL}, {"s", 1LL}}) {
    if (left < size) continue;
    out += std::to_string(left / size) + suffix;
    left %= size;
  }
  return out;
}

}  // namespace preflight
