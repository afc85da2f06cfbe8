#include "check/shell_words.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <string_view>

namespace preflight::check {

namespace {

using Kind = ShellWord::Kind;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Bash's metacharacters: they end a word unless quoted.
bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' ||
         c == '>';
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// NAME=, NAME+= or NAME[...]= at the start of a word as written.
bool looks_like_assignment(std::string_view raw) {
  if (raw.empty() || !is_name_start(raw[0])) return false;
  std::size_t i = 1;
  while (i < raw.size() && is_name_char(raw[i])) ++i;
  if (i < raw.size() && raw[i] == '[') {
    const auto close = raw.find(']', i);
    if (close == std::string_view::npos) return false;
    i = close + 1;
  }
  if (i < raw.size() && raw[i] == '+') ++i;
  return i < raw.size() && raw[i] == '=';
}

// Reserved words after which the next word is still a program: `if A=1 python x.py`.
bool keeps_command_position(const std::string& word) {
  static const std::array<std::string_view, 10> words = {"!",    "{",  "if",    "then",  "else",
                                                         "elif", "do", "while", "until", "time"};
  return std::find(words.begin(), words.end(), word) != words.end();
}

// What the lexer has of one word so far.
struct Piece {
  std::string text;
  bool certain = true;
  bool quoted = false;  // a quote or a backslash: a reserved word or an fd number no more
};

struct HereDocument {
  std::string delimiter;
  bool strip_tabs = false;  // <<-
};

class Lexer {
 public:
  explicit Lexer(const std::string& text) : text_(text) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<ShellWord> run() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (is_blank(c)) {
        ++i_;
      } else if (continuation(i_)) {
        i_ += 2;
      } else if (c == '\n') {
        push(Kind::Operator, i_, i_ + 1, "\n", true);
        ++i_;
        here_document_bodies();
        command_position_ = true;
      } else if (c == '#') {  // a comment, to the end of the line
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else if (redirection_at(i_)) {
        redirection(i_);
      } else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        control_operator();
      } else {
        word();
      }
    }
    return std::move(words_);
  }

 private:
  char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  // A backslash and a newline outside quotes: removed, the line goes on.
  bool continuation(std::size_t i) const { return at(i) == '\\' && at(i + 1) == '\n'; }

  bool process_substitution(std::size_t i) const {
    return (at(i) == '<' || at(i) == '>') && at(i + 1) == '(';
  }

  bool redirection_at(std::size_t i) const {
    return ((at(i) == '<' || at(i) == '>') && !process_substitution(i)) || (at(i) == '&' && at(i + 1) == '>');
  }

  int line_of(std::size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                            line_starts_.begin()) -
           1;
  }

  void push(Kind kind, std::size_t begin, std::size_t end, std::string text, bool certain) {
    words_.push_back({kind, std::move(text), certain, begin, end, line_of(begin)});
  }

  void control_operator() {
    static const std::array<std::string_view, 10> operators = {";;&", ";;", ";&", ";", "&&",
                                                               "&",   "||", "|&", "|", "("};
    const std::size_t begin = i_;
    std::string_view op = ")";
    for (const auto candidate : operators)
      if (std::string_view(text_).substr(i_, candidate.size()) == candidate) {
        op = candidate;
        break;
      }
    i_ += op.size();
    push(Kind::Operator, begin, i_, std::string(op), true);
    command_position_ = true;
  }

  // The operator at i_ (its fd, if any, written from `begin`), then its target word.
  void redirection(std::size_t begin) {
    static const std::array<std::string_view, 12> operators = {"&>>", "&>", "<<<", "<<-", "<<", "<>",
                                                               "<&",  ">>", ">|",  ">&",  "<",  ">"};
    std::string_view op;
    for (const auto candidate : operators)
      if (std::string_view(text_).substr(i_, candidate.size()) == candidate) {
        op = candidate;
        break;
      }
    i_ += op.size();
    while (is_blank(at(i_)) || continuation(i_)) i_ += is_blank(at(i_)) ? 1 : 2;
    bool certain = true;
    if (i_ >= text_.size() || (is_meta(at(i_)) && !process_substitution(i_))) {
      certain = false;  // no target: bash says it is a syntax error
    } else {
      const Piece target = read_word();
      if (op == "<<" || op == "<<-") pending_.push_back({target.text, op == "<<-"});
    }
    push(Kind::Redirection, begin, i_, text_.substr(begin, i_ - begin), certain);
  }

  // The bodies of the here-documents of the line just ended: no words.
  void here_document_bodies() {
    for (const auto& document : pending_) {
      while (i_ < text_.size()) {
        auto end = text_.find('\n', i_);
        if (end == std::string::npos) end = text_.size();
        std::string_view line = std::string_view(text_).substr(i_, end - i_);
        if (document.strip_tabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        i_ = std::min(end + 1, text_.size());
        if (line == document.delimiter) break;
      }
    }
    pending_.clear();
  }

  void word() {
    const std::size_t begin = i_;
    const Piece piece = read_word();
    const std::string_view raw = std::string_view(text_).substr(begin, i_ - begin);
    // `2>log`, `{fd}>log`: digits or {name} just before a redirection are its fd.
    if (redirection_at(i_) && at(i_) != '&' && !piece.quoted &&
        (std::all_of(raw.begin(), raw.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
         (raw.size() > 2 && raw.front() == '{' && raw.back() == '}' && is_name_start(raw[1]) &&
          std::all_of(raw.begin() + 1, raw.end() - 1, is_name_char)))) {
      redirection(begin);
      return;
    }
    const bool assignment = command_position_ && looks_like_assignment(raw);
    push(assignment ? Kind::Assignment : Kind::Word, begin, i_, piece.text, piece.certain);
    if (!assignment)
      command_position_ =
          command_position_ && piece.certain && !piece.quoted && keeps_command_position(piece.text);
  }

  Piece read_word() {
    const std::size_t begin = i_;
    Piece piece;
    bool brace_open = false;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (continuation(i_)) {
        i_ += 2;
      } else if (process_substitution(i_)) {  // <(...) and >(...): a /dev/fd path
        keep_expansion(piece, i_, skip_group(i_ + 1, '(', ')'));
      } else if (c == '(' && command_position_ &&
                 looks_like_assignment(std::string_view(text_).substr(begin, i_ - begin + 1)) &&
                 text_[i_ - 1] == '=') {  // NAME=(...): an array
        keep_expansion(piece, i_, skip_group(i_, '(', ')'));
      } else if (is_meta(c)) {
        break;
      } else if (c == '\\') {
        piece.quoted = true;
        if (i_ + 1 < text_.size())
          piece.text += text_[i_ + 1];
        else
          piece.text += c;  // a backslash at the very end stays
        i_ += 2;
      } else if (c == '\'') {
        piece.quoted = true;
        const auto close = text_.find('\'', i_ + 1);
        if (close == std::string::npos) {
          piece.text += text_.substr(i_ + 1);
          piece.certain = false;  // unterminated: bash refuses the line
          i_ = text_.size();
        } else {
          piece.text += text_.substr(i_ + 1, close - i_ - 1);
          i_ = close + 1;
        }
      } else if (c == '"') {
        piece.quoted = true;
        ++i_;
        double_quoted(piece);
      } else if (c == '$' && at(i_ + 1) == '\'') {
        piece.quoted = true;
        i_ += 2;
        ansi_c(piece);
      } else if (c == '$' && at(i_ + 1) == '"') {  // $"...": translated by the locale
        piece.quoted = true;
        piece.certain = false;
        i_ += 2;
        double_quoted(piece);
      } else if (c == '$') {
        dollar(piece);
      } else if (c == '`') {
        keep_expansion(piece, i_, skip_backquotes(i_));
      } else {
        // Globs, a tilde and brace expansion are left to the shell.
        if (c == '*' || c == '?' || c == '[' || c == '~' || (c == '}' && brace_open)) piece.certain = false;
        if (c == '{') brace_open = true;
        piece.text += c;
        ++i_;
      }
    }
    return piece;
  }

  // After an opening double quote, up to and past the closing one.
  void double_quoted(Piece& piece) {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '"') {
        ++i_;
        return;
      }
      if (c == '\\' && i_ + 1 < text_.size() &&
          std::string_view("$`\"\\\n").find(text_[i_ + 1]) != std::string_view::npos) {
        if (text_[i_ + 1] != '\n') piece.text += text_[i_ + 1];
        i_ += 2;
      } else if (c == '$') {
        dollar(piece);
      } else if (c == '`') {
        keep_expansion(piece, i_, skip_backquotes(i_));
      } else {
        piece.text += c;
        ++i_;
      }
    }
    piece.certain = false;  // unterminated
  }

  // After $', up to and past the closing quote, escapes as bash reads them.
  void ansi_c(Piece& piece) {
    static const std::string_view simple = "abeEfnrtv\\'\"?";
    static const std::string_view meaning = "\a\b\x1b\x1b\f\n\r\t\v\\'\"?";
    auto digits = [&](int base, int most) {
      int value = 0, count = 0;
      while (count < most && i_ < text_.size()) {
        const char d = text_[i_];
        const int v = std::isdigit(static_cast<unsigned char>(d)) ? d - '0'
                      : base == 16 && std::isxdigit(static_cast<unsigned char>(d))
                          ? std::tolower(static_cast<unsigned char>(d)) - 'a' + 10
                          : 99;
        if (v >= base) break;
        value = value * base + v;
        ++count;
        ++i_;
      }
      return std::pair{value, count};
    };
    while (i_ < text_.size()) {
      const char c = text_[i_++];
      if (c == '\'') return;
      if (c != '\\' || i_ >= text_.size()) {
        piece.text += c;
        continue;
      }
      const char e = text_[i_++];
      if (const auto k = simple.find(e); k != std::string_view::npos) {
        piece.text += meaning[k];
      } else if (e >= '0' && e <= '7') {
        --i_;
        const auto [value, count] = digits(8, 3);
        // \0 ends the string and values over \377 wrap: not modelled.
        if (value == 0 || value > 0377) piece.certain = false;
        piece.text += static_cast<char>(value);
      } else if (e == 'x' && at(i_) == '{') {  // \x{HHH}: bash 5.2's, not modelled
        piece.certain = false;
      } else if (e == 'x') {
        const auto [value, count] = digits(16, 2);
        if (count == 0)
          piece.text += "\\x";
        else
          piece.text += static_cast<char>(value);
        if (count > 0 && value == 0) piece.certain = false;
      } else if (e == 'u' || e == 'U' || e == 'c') {  // the locale's characters, control characters
        piece.certain = false;
        if (e == 'c' && i_ < text_.size())
          ++i_;
        else
          digits(16, e == 'u' ? 4 : 8);
      } else {
        piece.text += '\\';
        piece.text += e;
      }
    }
    piece.certain = false;  // unterminated
  }

  // $NAME, ${...}, $(...), $((...)), $[...], $1, $@...: kept as written, uncertain; a $ that
  // starts none of them is a plain $.
  void dollar(Piece& piece) {
    const char next = at(i_ + 1);
    if (next == '(') {
      keep_expansion(piece, i_, skip_group(i_ + 1, '(', ')'));
    } else if (next == '{') {
      keep_expansion(piece, i_, skip_group(i_ + 1, '{', '}'));
    } else if (next == '[') {
      keep_expansion(piece, i_, skip_group(i_ + 1, '[', ']'));
    } else if (is_name_start(next)) {
      std::size_t end = i_ + 1;
      while (is_name_char(at(end))) ++end;
      keep_expansion(piece, i_, end);
    } else if (next != '\0' && std::string_view("0123456789@*#?$!-").find(next) != std::string_view::npos) {
      keep_expansion(piece, i_, i_ + 2);
    } else {
      if (next == '\\') piece.certain = false;  // $\<newline>NAME and the like
      piece.text += '$';
      ++i_;
    }
  }

  void keep_expansion(Piece& piece, std::size_t begin, std::size_t end) {
    piece.text += text_.substr(begin, end - begin);
    piece.certain = false;
    i_ = end;
  }

  // From an opening `open` at `i`, past its matching `close` (quotes, escapes and nested
  // substitutions skipped); the end of the text if it has none.
  std::size_t skip_group(std::size_t i, char open, char close) const {
    int depth = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == '\\') {
        i += 2;
      } else if (c == '\'' && open != '[') {
        const auto end = text_.find('\'', i + 1);
        i = end == std::string::npos ? text_.size() : end + 1;
      } else if (c == '"') {
        i = skip_double_quotes(i);
      } else if (c == '`') {
        i = skip_backquotes(i);
      } else if (c == '$' && (at(i + 1) == '(' || at(i + 1) == '{')) {
        i = skip_group(i + 1, at(i + 1), at(i + 1) == '(' ? ')' : '}');
      } else {
        if (c == open) ++depth;
        if (c == close && --depth == 0) return i + 1;
        ++i;
      }
    }
    return text_.size();
  }

  std::size_t skip_double_quotes(std::size_t i) const {
    for (++i; i < text_.size();) {
      const char c = text_[i];
      if (c == '"') return i + 1;
      if (c == '\\') {
        i += 2;
      } else if (c == '`') {
        i = skip_backquotes(i);
      } else if (c == '$' && (at(i + 1) == '(' || at(i + 1) == '{')) {
        i = skip_group(i + 1, at(i + 1), at(i + 1) == '(' ? ')' : '}');
      } else {
        ++i;
      }
    }
    return text_.size();
  }

  std::size_t skip_backquotes(std::size_t i) const {
    for (++i; i < text_.size(); ++i) {
      if (text_[i] == '\\')
        ++i;
      else if (text_[i] == '`')
        return i + 1;
    }
    return text_.size();
  }

  const std::string& text_;
  std::vector<std::size_t> line_starts_;
  std::size_t i_ = 0;
  bool command_position_ = true;
  std::vector<HereDocument> pending_;
  std::vector<ShellWord> words_;
};

}  // namespace

std::vector<ShellWord> split_shell_words(const std::string& text) { return Lexer(text).run(); }

std::vector<ShellCommand> shell_commands(const std::string& text) {
  std::vector<ShellCommand> commands;
  ShellCommand command;
  bool empty = true;
  auto flush = [&] {
    if (!empty) commands.push_back(std::move(command));
    command = {};
    empty = true;
  };
  for (auto& word : split_shell_words(text)) {
    if (word.kind == Kind::Operator) {
      flush();
      continue;
    }
    if (empty) {
      command.begin = word.begin;
      command.line = word.line;
      empty = false;
    }
    command.end = word.end;
    if (word.kind != Kind::Redirection) command.words.push_back(std::move(word));
  }
  flush();
  return commands;
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

}  // namespace preflight::check
