// A Slurm batch script as job.yaml: its #SBATCH directives give the name, GPUs, nodes and
// working folder; the script itself is the command, run by bash in the submit folder as sbatch
// runs it, with `srun` taken off the lines it starts (the dry run is one task, so srun would
// start the command once) and the cluster's environment modules left to the image. Folders
// of the cluster the script reads are inputs through `--map /cluster/path=./local`.
// docs/formats.md "Slurm batch script" has the table.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <set>
#include <vector>

#include "formats/readers.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::formats {

namespace {

namespace fs = std::filesystem;

struct Option {
  std::string_view name;  // long
  char letter;            // short, or 0
  bool value;             // takes a value
};

// sbatch's options as its manual gives them; those not listed are named in a note.
constexpr Option kOptions[] = {
    {"job-name", 'J', true},
    {"gres", 0, true},
    {"gpus", 'G', true},
    {"gpus-per-node", 0, true},
    {"gpus-per-task", 0, true},
    {"nodes", 'N', true},
    {"ntasks", 'n', true},
    {"ntasks-per-node", 0, true},
    {"cpus-per-task", 'c', true},
    {"cpus-per-gpu", 0, true},
    {"mem", 0, true},
    {"mem-per-cpu", 0, true},
    {"mem-per-gpu", 0, true},
    {"time", 't', true},
    {"chdir", 'D', true},
    {"output", 'o', true},
    {"error", 'e', true},
    {"array", 'a', true},
    {"export", 0, true},
    {"partition", 'p', true},
    {"account", 'A', true},
    {"qos", 'q', true},
    {"constraint", 'C', true},
    {"mail-type", 0, true},
    {"mail-user", 0, true},
    {"dependency", 'd', true},
    {"reservation", 0, true},
    {"signal", 0, true},
    {"nice", 0, true},
    {"hint", 0, true},
    {"open-mode", 0, true},
    {"begin", 'b', true},
    {"comment", 0, true},
    {"wckey", 0, true},
    {"licenses", 'L', true},
    {"distribution", 'm', true},
    {"exclusive", 0, false},
    {"requeue", 0, false},
    {"no-requeue", 0, false},
    {"overcommit", 'O', false},
    {"oversubscribe", 's', false},
    {"parsable", 0, false},
    {"wait", 'W', false},
    {"verbose", 'v', false},
    {"quiet", 'Q', false},
};

const Option* find_option(std::string_view name, char letter) {
  for (const Option& option : kOptions)
    if ((!name.empty() && option.name == name) || (letter && option.letter == letter)) return &option;
  return nullptr;
}

// srun's options that take no value; srun's others take one ("-n 4", "--ntasks 4").
constexpr std::string_view kSrunFlags = "lukvQXEHOsZ";
constexpr std::string_view kSrunLongFlags[] = {
    "--exclusive",        "--overcommit", "--unbuffered", "--label", "--quiet", "--verbose",
    "--kill-on-bad-exit", "--no-kill",    "--overlap",    "--exact", "--pty"};

// A line of the script that starts with srun, without it and its options: "srun -n 4 python
// train.py" runs "python train.py". nullopt for any other line.
std::optional<std::string> without_srun(const std::string& line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line.compare(start, 4, "srun") != 0) return std::nullopt;
  std::size_t at = start + 4;
  if (at < line.size() && line[at] != ' ' && line[at] != '\t') return std::nullopt;
  const auto next_word = [&](std::size_t from) {
    const std::size_t begin = line.find_first_not_of(" \t", from);
    if (begin == std::string::npos) return std::pair<std::size_t, std::string>{line.size(), ""};
    const std::size_t end = std::min(line.find_first_of(" \t", begin), line.size());
    return std::pair<std::size_t, std::string>{begin, line.substr(begin, end - begin)};
  };
  for (;;) {
    auto [begin, word] = next_word(at);
    if (word.empty() || word[0] != '-') return line.substr(0, start) + line.substr(begin);
    at = begin + word.size();
    const bool long_option = word.rfind("--", 0) == 0;
    const bool takes_value = long_option
                                 ? word.find('=') == std::string::npos &&
                                       std::find(std::begin(kSrunLongFlags), std::end(kSrunLongFlags),
                                                 word) == std::end(kSrunLongFlags)
                                 : word.size() == 2 && kSrunFlags.find(word[1]) == std::string_view::npos;
    if (takes_value) at = next_word(at).first + next_word(at).second.size();
  }
}

// A --time value in seconds as sbatch reads it: "minutes", "minutes:seconds",
// "hours:minutes:seconds", "days-hours", "days-hours:minutes" or "days-hours:minutes:seconds";
// 0 for no limit ("0", "UNLIMITED", "INFINITE"); nullopt when malformed.
std::optional<long long> slurm_time_seconds(const std::string& value) {
  std::string lower = value;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "unlimited" || lower == "infinite") return 0;
  const auto dash = value.find('-');
  std::vector<long long> fields;
  for (std::size_t start = dash == std::string::npos ? 0 : dash + 1;;) {
    const auto end = std::min(value.find(':', start), value.size());
    const std::string field = value.substr(start, end - start);
    if (field.empty() || field.size() > 9 || field.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    fields.push_back(std::stoll(field));
    if (end == value.size()) break;
    start = end + 1;
  }
  if (fields.size() > 3) return std::nullopt;
  long long seconds = 0;
  if (dash != std::string::npos) {
    const std::string days = value.substr(0, dash);
    if (days.empty() || days.size() > 6 || days.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    constexpr long long kUnit[] = {3600, 60, 1};  // hours, then minutes, then seconds
    seconds = std::stoll(days) * 86400;
    for (std::size_t i = 0; i < fields.size(); ++i) seconds += fields[i] * kUnit[i];
  } else {
    constexpr long long kUnit[3][3] = {{60}, {60, 1}, {3600, 60, 1}};  // by how many fields
    for (std::size_t i = 0; i < fields.size(); ++i) seconds += fields[i] * kUnit[fields.size() - 1][i];
  }
  return seconds;
}

// The GPUs a --gres list asks for ("gpu:4", "gpu:a100:2,shard:1"); nullopt without gpu.
std::optional<std::string> gres_gpus(const std::string& gres) {
  std::size_t start = 0;
  for (;;) {
    const auto end = gres.find(',', start);
    const std::string item = gres.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (item == "gpu") return "1";
    if (item.rfind("gpu:", 0) == 0) {
      const std::string count = item.substr(item.rfind(':') + 1);
      return std::all_of(count.begin(), count.end(), ::isdigit) && !count.empty() ? count : "1";
    }
    if (end == std::string::npos) return std::nullopt;
    start = end + 1;
  }
}

// "--gpus=a100:2" or "2": the count.
std::string gpu_count(const std::string& value) { return value.substr(value.rfind(':') + 1); }

class SlurmReader {
 public:
  SlurmReader(const fs::path& file, const std::string& text, const ReadOptions& options)
      : file_(file), text_(text), options_(options), out_(file) {}

  Result<Translation> read() {
    split_lines();
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      const std::string& line = lines_[i];
      const std::string_view trimmed = trim_view(line);
      if (trimmed.rfind("#SBATCH", 0) == 0) {
        // sbatch reads directives only before the script's first command.
        if (!in_directives_) {
          out_.unmapped(at(i), "#SBATCH after the first command",
                        "sbatch ignores it, and so does the dry run");
          continue;
        }
        if (auto ok = read_directive(std::string(trimmed.substr(7)), i); !ok) return std::move(ok).error();
      } else if (!trimmed.empty() && trimmed[0] != '#') {
        in_directives_ = false;
      }
    }
    rewrite_script();
    write();
    return std::move(out_);
  }

 private:
  SourceLocation at(std::size_t line, int column = 1) const {
    return SourceLocation{file_, static_cast<int>(line) + 1, column};
  }

  void split_lines() {
    std::size_t start = 0;
    while (start < text_.size()) {
      const auto end = text_.find('\n', start);
      lines_.push_back(text_.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }

  Status read_directive(const std::string& rest, std::size_t line) {
    std::vector<std::string> words;
    for (std::size_t start = rest.find_first_not_of(" \t"); start != std::string::npos;) {
      const auto end = rest.find_first_of(" \t", start);
      std::string word = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (word[0] == '#') break;  // a comment after the directive
      words.push_back(std::move(word));
      start = end == std::string::npos ? end : rest.find_first_not_of(" \t", end);
    }
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string& word = words[i];
      const SourceLocation where = at(line, static_cast<int>(lines_[line].find(word)) + 1);
      if (word.size() < 2 || word[0] != '-') {
        out_.unmapped(where, "#SBATCH " + word,
                      "not an option (a value with spaces needs quotes, which sbatch reads)");
        continue;
      }
      std::string name, value;
      const Option* option = nullptr;
      if (word.rfind("--", 0) == 0) {
        const auto eq = word.find('=');
        name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        option = find_option(name, 0);
        if (eq != std::string::npos)
          value = word.substr(eq + 1);
        else if (option && option->value && i + 1 < words.size())
          value = words[++i];
      } else {
        option = find_option({}, word[1]);
        name = option ? std::string(option->name) : word.substr(1, 1);
        if (word.size() > 2)
          value = word.substr(word[2] == '=' ? 3 : 2);
        else if (option && option->value && i + 1 < words.size())
          value = words[++i];
      }
      if (!option) {
        out_.unmapped(where, "#SBATCH " + word, "not an sbatch option Preflight knows");
        continue;
      }
      if (option->value && value.empty())
        return Error::bad_input(fmt::format("#SBATCH --{} needs a value", name), where);
      if (auto ok = directive(name, value, where); !ok) return ok;
    }
    return Ok{};
  }

  Status directive(const std::string& name, const std::string& value, const SourceLocation& where) {
    const std::string said = fmt::format("#SBATCH --{}{}{}", name, value.empty() ? "" : "=", value);
    if (name == "job-name") {
      name_ = {job_name_of(value), where, said};
    } else if (name == "gres") {
      if (auto count = gres_gpus(value))
        gpus_ = {*count, where, said};
      else
        out_.unmapped(where, said, "asks for no GPU; other generic resources are not modelled");
    } else if (name == "gpus" || name == "gpus-per-node") {
      gpus_ = {gpu_count(value), where, said};
    } else if (name == "gpus-per-task") {
      gpus_ = {gpu_count(value), where, said + " (one task in the dry run)"};
    } else if (name == "nodes") {
      nodes_ = {value.substr(0, value.find('-')), where, said};
    } else if (name == "chdir") {
      chdir_ = {value, where, said};
    } else if (name == "array") {
      // SLURM_ARRAY_TASK_ID as the first task of the array has it: "0-9%2" → 0, "1,3,5" → 1.
      const std::string first = value.substr(0, value.find_first_of("-,:%"));
      environment_.push_back({"SLURM_ARRAY_TASK_ID", {first, where, said + ", the array's first task"}});
      environment_.push_back({"SLURM_ARRAY_JOB_ID", {"4242", where, said + ", as SLURM_JOB_ID"}});
      out_.unmapped(where, said, "the dry run is the array's first task, " + first);
    } else if (name == "export") {
      for (std::size_t start = 0; start <= value.size();) {
        const auto end = std::min(value.find(',', start), value.size());
        const std::string item = value.substr(start, end - start);
        if (const auto eq = item.find('='); eq != std::string::npos)
          environment_.push_back({item.substr(0, eq), {item.substr(eq + 1), where, said}});
        else if (item != "ALL" && item != "NONE" && !item.empty())
          out_.unmapped(where, said + " (" + item + ")",
                        "a variable of the submitting shell is not known here");
        start = end + 1;
      }
    } else if (name == "time") {
      const auto seconds = slurm_time_seconds(value);
      if (!seconds)
        return Error::bad_input(fmt::format("#SBATCH --time={} is not a time sbatch reads; write minutes, "
                                            "HH:MM:SS or DAYS-HH:MM:SS, e.g. --time=2:00:00",
                                            value),
                                where);
      if (*seconds == 0)
        out_.unmapped(where, said, "no time limit");
      else
        time_ = {duration_text(std::chrono::seconds(*seconds)), where, said};
    } else if (name == "output" || name == "error") {
      out_.unmapped(where, said,
                    "where Slurm writes the job's " + std::string(name == "output" ? "output" : "errors") +
                        "; the dry run shows it in the report (its folder must exist when the job starts)");
    } else if (name == "ntasks" || name == "ntasks-per-node") {
      out_.unmapped(where, said,
                    "the dry run is one task: the script runs once, and srun starts its command once");
    } else if (name == "cpus-per-task") {
      // Slurm sets it only when the script asks, and scripts size their workers by it.
      environment_.push_back({"SLURM_CPUS_PER_TASK", {value, where, said}});
      out_.unmapped(where, said, "the platform profile's CPU limit applies (policies/platforms/slurm.yaml)");
    } else if (name.rfind("mem", 0) == 0 || name.rfind("cpus", 0) == 0) {
      out_.unmapped(where, said, "the platform profile's limits apply (policies/platforms/slurm.yaml)");
    } else {
      out_.unmapped(where, said, "scheduling and accounting; the dry run runs now, on this machine");
    }
    return Ok{};
  }

  // The script as the dry run runs it: srun taken off the lines it starts; environment modules
  // and conda environments, which are the cluster's, left to the image.
  void rewrite_script() {
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      std::string& line = lines_[i];
      const std::string_view trimmed = trim_view(line);
      const auto first_word = trimmed.substr(0, trimmed.find_first_of(" \t"));
      if (auto rest = without_srun(line)) {
        out_.unmapped(at(i), "srun", "the dry run is one task; the command after it runs once, without srun");
        line = *rest;
      } else if (first_word == "module" || first_word == "ml" ||
                 (trimmed.rfind("conda activate", 0) == 0 || trimmed.rfind("source activate", 0) == 0)) {
        out_.unmapped(at(i), std::string(trimmed),
                      "the cluster's software environment; the image stands in for it (the line is made a "
                      "comment)");
        line = "# " + line;
      }
    }
  }

  void write() {
    out_.comment(
        fmt::format("The job.yaml that stands for {} (a Slurm batch script), written by preflight convert.",
                    file_.filename().string()));
    out_.comment("Each field names where it came from; what could not be mapped is listed at the end.");
    if (name_) out_.field(0, "name", {name_->text}, name_->from, name_->said);
    out_.field(0, "platform", {"slurm"}, at(0), "a batch script");
    write_code(out_, options_, {});
    if (chdir_) out_.field(0, "code_mount", {chdir_->text}, chdir_->from, chdir_->said);
    Scalar script{text_.empty() ? text_ : join_lines(), false, {}};
    for (std::size_t i = 0; i < lines_.size(); ++i) script.line_origins.push_back(at(i));
    out_.field(0, "command", script, at(0), "the script, run by bash as sbatch runs it");
    write_inputs();
    if (!environment_.empty()) {
      out_.open(0, "environment_variables", environment_.front().second.from);
      for (const auto& [variable, value] : environment_)
        out_.field(1, variable, {value.text}, value.from, value.said);
    }
    out_.open(0, "resources", at(0));
    if (gpus_) out_.field(1, "gpus", {gpus_->text, true}, gpus_->from, gpus_->said);
    if (nodes_) out_.field(1, "nodes", {nodes_->text, true}, nodes_->from, nodes_->said);
    if (time_) out_.field(0, "time_limit", {time_->text}, time_->from, time_->said);
  }

  std::string join_lines() const {
    std::string out;
    for (const auto& line : lines_) out += line + "\n";
    if (!text_.empty() && text_.back() != '\n' && !out.empty()) out.pop_back();
    return out;
  }

  // Each --map of a cluster folder (/datasets/imagenet=./sample) is an input there.
  void write_inputs() {
    bool opened = false;
    std::set<std::string> names;
    for (const spec::PathMap& map : options_.load.maps) {
      if (map.prefix.empty() || map.prefix[0] != '/') continue;
      if (!opened) out_.open(0, "inputs", {}, "--map"), opened = true;
      std::string name = input_name(fs::path(map.prefix).filename().string());
      for (int n = 2; names.count(name); ++n)
        name = input_name(fs::path(map.prefix).filename().string()) + "_" + std::to_string(n);
      names.insert(name);
      out_.open(1, name, {});
      out_.field(2, "path", {relative_to_source(out_, map.local)}, {}, "--map " + map.prefix);
      out_.field(2, "mount", {map.prefix}, {}, "where the cluster has it");
    }
  }

  struct Found {
    std::string text;
    SourceLocation from;
    std::string said;
  };

  fs::path file_;
  const std::string& text_;
  const ReadOptions& options_;
  Translation out_;
  std::vector<std::string> lines_;
  bool in_directives_ = true;
  std::optional<Found> name_, gpus_, nodes_, chdir_, time_;
  std::vector<std::pair<std::string, Found>> environment_;
};

}  // namespace

Result<Translation> translate_slurm(const fs::path& file, const std::string& text,
                                    const ReadOptions& options) {
  return SlurmReader(file, text, options).read();
}

}  // namespace preflight::formats
