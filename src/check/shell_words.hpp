// Words of a shell command line, as the shell would split them before running it: enough to
// find the program, its arguments and the operators between commands (no expansion).
#pragma once

#include <string>
#include <vector>

namespace preflight::check {

// Words with quotes removed; the operators ; & | and newlines are words of their own.
std::vector<std::string> shell_words(const std::string& command);

// ;, &, |, a newline or a redirection: the end of one simple command's arguments.
bool is_operator(const std::string& word);

}  // namespace preflight::check
