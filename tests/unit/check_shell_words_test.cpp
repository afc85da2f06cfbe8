// Shell words as bash reads them: examples, then a differential test that generates command
// lines from a fixed seed and compares the words Preflight is certain of with those bash passes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check/shell_words.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using check::ShellWord;
namespace fs = std::filesystem;

// The words of the first simple command, as (text, certain).
std::vector<std::pair<std::string, bool>> first_command(const std::string& text) {
  std::vector<std::pair<std::string, bool>> out;
  const auto commands = check::shell_commands(text);
  if (!commands.empty())
    for (const auto& word : commands.front().words) out.emplace_back(word.text, word.certain);
  return out;
}

std::vector<std::string> texts(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [word, certain] : first_command(text)) out.push_back(word);
  return out;
}

using Words = std::vector<std::string>;

TEST(CheckShellWords, QuotesAndEscapesAsBashReadsThem) {
  EXPECT_EQ(texts(R"(python train.py --tag "<b>" --epochs 3)"),
            (Words{"python", "train.py", "--tag", "<b>", "--epochs", "3"}));
  EXPECT_EQ(texts(R"(p 'a "b"' "c \"d\" \a \$" e\ f \<g)"),
            (Words{"p", "a \"b\"", "c \"d\" \\a $", "e f", "<g"}));
  EXPECT_EQ(texts("p $'a\\tb\\x41\\101\\'\\q' $'\\x'"), (Words{"p", "a\tbAA'\\q", "\\x"}));
  EXPECT_EQ(texts("p a\\\nb \"c\\\nd\" 'e\\\nf'"), (Words{"p", "ab", "cd", "e\\\nf"}));
  EXPECT_EQ(texts("p a#b # a comment"), (Words{"p", "a#b"}));
  EXPECT_EQ(texts("p \"a$\" a$ \"$ x\""), (Words{"p", "a$", "a$", "$ x"}));
}

TEST(CheckShellWords, RedirectionsOperatorsAndHereDocuments) {
  EXPECT_EQ(texts("p a > log 2>&1 b <in c &>all d <<< 'x y' e 3>x f"),
            (Words{"p", "a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(texts("p a2>x b"), (Words{"p", "a2", "b"})) << "digits glued to a word are no fd";
  const auto commands = check::shell_commands("cat <<'EOF' && p x\npython fake.py\nEOF\np y; q z|r&&s||t &u");
  ASSERT_EQ(commands.size(), 8u);
  EXPECT_EQ(commands[1].words[1].text, "x");
  EXPECT_EQ(commands[2].words[1].text, "y") << "the here-document's body is no command";
  EXPECT_EQ(commands[2].line, 3);
  const auto words = check::split_shell_words("p a >> b 2>&1 && q ; r\n");
  ASSERT_EQ(words.size(), 9u);
  EXPECT_EQ(words[2].kind, ShellWord::Kind::Redirection);
  EXPECT_EQ(words[2].text, ">> b");
  EXPECT_EQ(words[3].text, "2>&1");
  EXPECT_EQ(words[4].kind, ShellWord::Kind::Operator);
  EXPECT_EQ(words[4].text, "&&");
  EXPECT_EQ(words[8].text, "\n");
}

TEST(CheckShellWords, AssignmentsAndWhatOnlyTheShellKnows) {
  const auto words = check::split_shell_words("A=1 B+=x p C=2 $X \"$(date)\" `id` ~/a *.py {a,b} a{b '$X'");
  ASSERT_EQ(words.size(), 12u);
  EXPECT_EQ(words[0].kind, ShellWord::Kind::Assignment);
  EXPECT_EQ(words[1].kind, ShellWord::Kind::Assignment);
  EXPECT_EQ(words[3].kind, ShellWord::Kind::Word) << "after the program, NAME=value is an argument";
  for (std::size_t i = 4; i < 10; ++i) EXPECT_FALSE(words[i].certain) << words[i].text;
  EXPECT_EQ(words[5].text, "$(date)");
  EXPECT_TRUE(words[10].certain);
  EXPECT_TRUE(words[11].certain) << "single quotes: a plain $X";
  EXPECT_EQ(words[11].text, "$X");
}

// Command lines from a small grammar: the entry program `prog` among other commands, with
// quotes, escapes, $'...', expansions, redirections, here-documents, assignments, comments and
// continuations. Each line is run by bash, where prog prints its arguments.
class LineGenerator {
 public:
  explicit LineGenerator(unsigned seed) : rng_(seed) {}

  std::string line() {
    bodies_.clear();
    std::string out;
    for (int n = pick(3); n > 0; --n) out += prefix();
    for (int n = chance(25) ? 1 + pick(2) : 0; n > 0; --n) out += assignment() + " ";
    out += "prog";
    bool glue = false;  // no space before a word or a redirection, but never after a redirection
    for (int n = pick(7); n > 0; --n) {
      out += glue && chance(10) ? "" : " ";
      const bool redirect = chance(15);
      out += redirect ? redirection() : word();
      glue = !redirect;
    }
    out += one_of({"", "", "", " # a comment's 'quote", ";", "; other a", " && other", "&&other b",
                   " | other", " 2>&1 | other", " &", "|other"});
    for (const auto& body : bodies_) out += "\n" + body;
    if (chance(10)) out += "\nother after";
    return out;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int percent) { return pick(100) < percent; }
  std::string one_of(const std::vector<std::string>& choices) {
    return choices[static_cast<std::size_t>(pick(static_cast<int>(choices.size())))];
  }
  std::string chars(const std::string& alphabet, int most) {
    std::string out;
    for (int n = 1 + pick(most); n > 0; --n)
      out += alphabet[static_cast<std::size_t>(pick(static_cast<int>(alphabet.size())))];
    return out;
  }

  std::string prefix() {
    std::string command = one_of({"other", "other x 'y z'", "X=1", "true", "false ||", ": \"$(sub a)\"",
                                  "# a comment\n", "other \"<b>\" >out1"});
    if (command.ends_with("||") || command.ends_with("\n")) return command + (chance(50) ? " " : "");
    if (chance(15)) {
      const std::string delimiter = one_of({"EOF", "'EOF'", "\"EOF\"", "E\\OF"});
      command += " <<" + delimiter;
      return command + "\n" + body() + "\nEOF\n";
    }
    return command + one_of({" && ", "; ", ";", "\n", " | ", "&&", "\n\n", " ;\n"});
  }

  std::string body() {
    std::string out;
    for (int n = pick(3); n > 0; --n)
      out += one_of({"prog not these words", "\"unterminated <b>", "EOFX", " EOF", "a $X `sub` $(sub)", "'",
                     "\\"}) +
             "\n";
    return out + "text";
  }

  std::string assignment() {
    return one_of({"A", "B", "LONG_NAME", "C"}) + one_of({"=", "=", "+="}) + (chance(20) ? "" : word());
  }

  std::string redirection() {
    if (chance(10)) {
      const bool tabs = chance(50);
      bodies_.push_back(tabs ? "\tprog not this\n\tEND" : "prog not this <b> 'x\nEND");
      return tabs ? "<<-END" : one_of({"<<END", "<< 'END'", "<<\"END\""});
    }
    return one_of({"> out1",         ">out2",        ">> 'out 3'",  "2> err1",    "2>&1",
                   "&> all1",        "&>>all2",      "< in1",       "<in2",       "0< in1",
                   "<<< 'here <b>'", "<<< \"a $X\"", "<<<word",     "3> out4",    "1>| out5",
                   "<> in1",         ">& all3",      "2>/dev/null", "{fd}> out6", ">\\\nout7"});
  }

  std::string word() {
    std::string out;
    for (int n = 1 + pick(3); n > 0; --n) {
      const int kind = pick(100);
      if (kind < 30) {
        std::string plain = chars("abcXYZ019_-./:=,+@%^!]}", 6);
        if (!out.empty() && chance(10)) plain += "#";
        out += plain;
      } else if (kind < 42) {
        out += "'" + chars("ab <>|&;\"$\\`*?~#{}()\n\t-=", 8) + "'";
      } else if (kind < 58) {
        out += double_quoted();
      } else if (kind < 68) {
        out += "\\" + chars(" <>|&;'\"$*?~#{}()\\abn=", 1);
      } else if (kind < 78) {
        out += ansi_c();
      } else if (kind < 88) {
        out += one_of({"$X",     "${X}",     "${X:-a b}", "\"$X\"", "$(sub a b)", "`sub`",   "$((1+2))",
                       "~",      "~/x",      "*.nomatch", "?",      "[ab]",       "{a,b}",   "{1..2}",
                       "<(sub)", "$\"loc\"", "$1",        "$@",     "\"${X}y\"",  "a{b,c}d", "$(sub \")\")"});
      } else if (kind < 93) {
        out += "\\\n";
      } else {
        out += one_of({"-", "--tag", "--epochs", "3", "--x=\"<y>\"", "{", "}", "{}", "a{b", "=", "!"});
      }
    }
    if (out == "\\\n" || out.starts_with("#")) out = "w" + out;
    return out;
  }

  std::string double_quoted() {
    std::string out = "\"";
    for (int n = 1 + pick(5); n > 0; --n) {
      const int kind = pick(100);
      if (kind < 55)
        out += chars("ab <>|&;'*?~#{}()\n\t-=!", 4);
      else if (kind < 80)
        out += one_of({"\\\"", "\\\\", "\\$", "\\`", "\\a", "\\n", "\\\n", "\\'", "$ ", "$/"});
      else if (kind < 90)
        out += one_of({"$X", "$(sub)", "${X:-\"q\"}", "`sub`"});
      else
        out += "$'x'";
    }
    if (chance(10)) out += "$";
    return out + "\"";
  }

  std::string ansi_c() {
    std::string out = "$'";
    for (int n = 1 + pick(5); n > 0; --n) {
      if (chance(40))
        out += chars("ab <>|&;\"$`*?~#{}()-=", 3);
      else
        out +=
            one_of({"\\n", "\\t", "\\\\", "\\'", "\\\"",  "\\x41",   "\\x7e", "\\101", "\\q",  "\\x",  "\\a",
                    "\\e", "\\?", "\\E",  "\\7", "\\x4g", "\\u00e9", "\\cA",  "\\60",  "\\\n", "\\xff"});
    }
    return out + "'";
  }

  std::mt19937 rng_;
  std::vector<std::string> bodies_;
};

// The arguments bash gives `prog` in each line, read from prog's NUL-separated output: for each
// call, the number of arguments then each one; "E" after each line.
std::vector<std::optional<Words>> bash_words(const std::vector<std::string>& lines, const fs::path& folder) {
  // No program can run: PATH is an empty folder, every command the lines name is a function,
  // and substitutions are replaced. Output goes to fd 7, which no line names; redirections land
  // in the test's own folder.
  std::ostringstream script;
  script << "exec 7>&1 >/dev/null 2>&1\n"
         << "PATH=" << (folder / "empty").string() << "\n"
         << "prog() { printf '%s\\0' \"$#\" \"$@\" >&7; }\n"
         << "other() { :; }\nX='x  y'\n";
  for (auto line : lines) {
    // Substitutions become a placeholder word: bash starts no subshell for them.
    for (const std::string substitution :
         {"$(sub a b)", "$(sub a)", "$(sub)", "`sub`", "<(sub)", "$(sub \")\")"})
      for (std::size_t at; (at = line.find(substitution)) != std::string::npos;)
        line.replace(at, substitution.size(), "SUB");
    script << "IFS= read -r -d '' L <<'PF_LINE_END'\n"
           << line << "\nPF_LINE_END\n"
           << "eval \"$L\"\nwait\nprintf 'E\\0' >&7\n";
  }
  std::ofstream(folder / "lines.sh") << script.str();
  std::ofstream(folder / "in1") << "in\n";
  std::ofstream(folder / "in2") << "in\n";
  fs::create_directories(folder / "empty");
  const std::string command = "cd '" + folder.string() + "' && env -i HOME='" + folder.string() +
                              "' LC_ALL=C bash --norc --noprofile lines.sh";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[65536];
    for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    pclose(pipe);
  }
  std::vector<std::string> fields;
  for (std::size_t at = 0, end; (end = output.find('\0', at)) != std::string::npos; at = end + 1)
    fields.push_back(output.substr(at, end - at));
  std::vector<std::optional<Words>> out;
  std::optional<Words> current;
  for (std::size_t i = 0; i < fields.size();) {
    if (fields[i] == "E") {
      out.push_back(std::move(current));
      current.reset();
      ++i;
      continue;
    }
    const auto count = static_cast<std::size_t>(std::stoul(fields[i]));
    if (!current)
      current = Words(fields.begin() + static_cast<long>(i) + 1,
                      fields.begin() + static_cast<long>(std::min(fields.size(), i + 1 + count)));
    i += 1 + count;
  }
  return out;
}

TEST(CheckShellWords, TheEntryCommandsWordsAreThoseBashPasses) {
  if (system("bash -c true >/dev/null 2>&1") != 0) GTEST_SKIP() << "no bash";
  const auto started = std::chrono::steady_clock::now();
  constexpr int kLines = 5000;
  LineGenerator generate(31);
  std::vector<std::string> lines;
  for (int i = 0; i < kLines; ++i) lines.push_back(generate.line());
  testing::TempDir dir;
  const auto from_bash = bash_words(lines, dir.path());
  ASSERT_EQ(from_bash.size(), lines.size()) << "bash stopped early";

  int differences = 0, compared = 0, certain_lines = 0;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const auto& bash = from_bash[n];
    ASSERT_TRUE(bash) << "bash did not run prog in:\n" << lines[n];
    std::optional<std::vector<ShellWord>> ours;
    for (const auto& command : check::shell_commands(lines[n])) {
      auto program = std::find_if(command.words.begin(), command.words.end(),
                                  [](const ShellWord& w) { return w.kind != ShellWord::Kind::Assignment; });
      if (program != command.words.end() && program->certain && program->text == "prog") {
        ours.emplace(program + 1, command.words.end());
        break;
      }
    }
    std::string why;
    if (!ours) {
      why = "Preflight finds no prog";
    } else {
      // The words before the first uncertain one are where bash has them; all of them must
      // match, and their number too when every word is certain.
      std::size_t certain = 0;
      while (certain < ours->size() && (*ours)[certain].certain) ++certain;
      if (certain == ours->size()) ++certain_lines;
      for (std::size_t i = 0; i < certain && why.empty(); ++i) {
        ++compared;
        if (i >= bash->size() || (*bash)[i] != (*ours)[i].text)
          why = "word " + std::to_string(i) + ": Preflight reads [" + (*ours)[i].text + "], bash [" +
                (i < bash->size() ? (*bash)[i] : std::string("nothing")) + "]";
      }
      if (why.empty() && certain == ours->size() && bash->size() != ours->size())
        why = std::to_string(ours->size()) + " words for Preflight, " + std::to_string(bash->size()) +
              " for bash";
    }
    if (!why.empty() && ++differences <= 10) ADD_FAILURE() << why << " in:\n" << lines[n];
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << kLines << " lines, " << compared << " certain words compared, " << certain_lines
            << " lines certain throughout, " << differences << " differences, " << seconds << " s\n";
  EXPECT_EQ(differences, 0);
  EXPECT_GT(certain_lines, kLines / 4) << "most lines should be certain: is the generator fair?";
}

}  // namespace
}  // namespace preflight
