// Versions of Python distributions as PEP 440 orders them, enough to tell an upgrade from a
// downgrade and to read requirement specifiers (==, !=, <=, >=, <, >, ~=, ===, ==X.*).
#pragma once

#include <string>

namespace preflight::check {

// Release numbers first, then dev < pre-release < final < post-release; a local part
// (+gitunknown) does not order. <0, 0 or >0.
int compare_versions(const std::string& a, const std::string& b);

// Whether `version` meets a specifier list such as ">=1.10,<2" or "==1.13.*". A clause that
// cannot be read is taken as met.
bool satisfies(const std::string& version, const std::string& specifier);

}  // namespace preflight::check
