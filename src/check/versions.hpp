// Versions of Python distributions as PEP 440 orders them (packaging's Version), and
// requirement specifiers (==, !=, <=, >=, <, >, ~=, ===, ==X.*) as pip reads them for a
// distribution that is already installed: pre-releases count (1.13.0a0 meets >=1.12), a
// local part (+gitunknown) is ignored unless the specifier names one.
#pragma once

#include <optional>
#include <string>

namespace preflight::check {

// Epoch, release numbers, then dev < pre-release < final < post-release, then the local part
// (none first). An unreadable version sorts before every readable one. <0, 0 or >0.
int compare_versions(const std::string& a, const std::string& b);

bool valid_version(const std::string& text);

// Whether `version` meets a specifier list such as ">=1.10,<2" or "==1.13.*"; nullopt when
// the version or a clause cannot be read.
std::optional<bool> specifier_holds(const std::string& version, const std::string& specifier);

// specifier_holds, an unreadable clause taken as met.
bool satisfies(const std::string& version, const std::string& specifier);

}  // namespace preflight::check
