#include "check/shell_words.hpp"

#include <sstream>
#include <string_view>

namespace preflight::check {

std::vector<std::string> split_shell_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool has_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    // A backslash before a newline joins the lines (outside single quotes); outside quotes it
    // makes the next character plain, inside double quotes only $ ` " \ and a newline.
    if (c == '\\' && quote != '\'' && i + 1 < command.size()) {
      const char next = command[++i];
      if (next == '\n') continue;
      if (quote == '"' && std::string_view("$`\"\\").find(next) == std::string_view::npos) word += c;
      word += next;
      has_word = true;
    } else if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      has_word = true;
    } else if (c == '#' && !has_word) {
      // A comment runs to the end of the line.
      while (i + 1 < command.size() && command[i + 1] != '\n') ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|') {
      if (has_word) words.push_back(word);
      word.clear();
      has_word = false;
      if (c != ' ' && c != '\t') words.push_back(std::string(1, c));
    } else {
      word += c;
      has_word = true;
    }
  }
  if (has_word) words.push_back(word);
  return words;
}

void for_each_command_line(const std::string& text,
                           const std::function<void(int, const std::string&)>& visit) {
  std::istringstream lines(text);
  std::string line;
  for (int index = 0; std::getline(lines, line); ++index) {
    // A line that ends in a backslash goes on in the next: one command, at its first line.
    const int first_index = index;
    std::string next;
    while (!line.empty() && line.back() == '\\' && std::getline(lines, next)) {
      line.pop_back();
      line += " " + next;
      ++index;
    }
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] != '#') visit(first_index, line);
  }
}

bool is_operator(const std::string& word) {
  return word == ";" || word == "&" || word == "|" || word == "\n" || word.rfind('>', 0) == 0 ||
         word.rfind('<', 0) == 0 || word.rfind("2>", 0) == 0;
}

}  // namespace preflight::check
