// Words of a shell command line, as the shell would split them before running it: enough to
// find the program, its arguments and the operators between commands (no expansion).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace preflight::check {

// Words with quotes removed; the operators ; & | and newlines are words of their own.
std::vector<std::string> split_shell_words(const std::string& command);

// Calls `visit(index, line)` for each line of `text` that is neither blank nor a comment;
// `index` counts from 0, blank and comment lines included.
void for_each_command_line(const std::string& text,
                           const std::function<void(int, const std::string&)>& visit);

// ;, &, |, a newline or a redirection: the end of one simple command's arguments.
bool is_operator(const std::string& word);

}  // namespace preflight::check
