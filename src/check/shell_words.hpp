// Words of a shell text as bash reads them before running it: quotes, backslashes, $'...',
// comments, continuations, redirections with their targets, here-documents (whose bodies are
// no words), the operators between commands and the assignments before a program. Nothing is
// expanded: a word that holds an expansion, a glob, a brace or a tilde, or anything else this
// file does not model, is kept as written and marked uncertain (tests/unit/check_shell_words_test.cpp
// compares the certain ones with what bash passes to a program).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace preflight::check {

struct ShellWord {
  enum class Kind {
    Word,         // the program or one of its arguments
    Assignment,   // NAME=value (NAME+=value) before the program
    Redirection,  // `> log`, `2>&1`, `<<EOF`, `<<< "$x"`: the operator, its fd and its target
    Operator,     // ; & | && || |& ;; ( ) or a newline: between commands
  };
  Kind kind = Kind::Word;
  // A word or an assignment with quotes removed and escapes applied, its expansions as written;
  // a redirection or an operator as written.
  std::string text;
  // A word or an assignment that is exactly what bash makes of it: no expansion, glob, brace
  // expansion, tilde, unterminated quote or anything else this file does not model.
  bool certain = true;
  std::size_t begin = 0, end = 0;  // where it is written: [begin, end) of the text
  int line = 0;                    // the line it starts on, from 0
};

// The words of `text`, here-document bodies and comments left out.
std::vector<ShellWord> split_shell_words(const std::string& text);

// One simple command of a shell text: its words and assignments in order, without its
// redirections; where it is written.
struct ShellCommand {
  std::vector<ShellWord> words;
  std::size_t begin = 0, end = 0;
  int line = 0;
};

// The simple commands of `text`, split at its operators; those without words are left out.
std::vector<ShellCommand> shell_commands(const std::string& text);

// Calls `visit(index, line)` for each line of `text` that is neither blank nor a comment;
// `index` counts from 0, blank and comment lines included.
void for_each_command_line(const std::string& text,
                           const std::function<void(int, const std::string&)>& visit);

}  // namespace preflight::check
