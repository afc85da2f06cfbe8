#include "pipeline/job_draft.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPlaceholder = "CHANGE_ME";

// Folders a repository keeps its data in, at its top.
const char* const kDataFolders[] = {"data", "datasets", "dataset"};

std::vector<std::string> words_of(const std::string& dest) {
  std::vector<std::string> words(1);
  for (char c : dest) {
    if (c == '_' || c == '-') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

bool has_word(const std::vector<std::string>& words, std::initializer_list<const char*> any) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
    return std::any_of(any.begin(), any.end(), [&](const char* w) { return word == w; });
  });
}

// An option that takes one path: a plain or optional value of no type, str or Path.
bool takes_path(const check::ArgOption& option) {
  return (option.action == "store" || option.action.empty()) &&
         (option.nargs.empty() || option.nargs == "?") &&
         (option.type.empty() || option.type == "str" || option.type == "Path");
}

// --save-dir, --output-dir, --outf, --checkpoint-dir, --log-dir, --results, ...
bool output_like(const std::vector<std::string>& words) {
  return has_word(words, {"out", "outf", "output", "outputs", "outdir", "save", "checkpoint", "checkpoints",
                          "ckpt", "result", "results", "export", "logdir"}) ||
         (has_word(words, {"log", "logs", "model", "tensorboard"}) &&
          has_word(words, {"dir", "path", "folder"}));
}

// --data, --dataroot, --data-dir, --dataset-path, --train-data-dir, ... (not --dataset, a name).
bool data_like(const std::vector<std::string>& words) {
  if (words.size() == 1) return words[0] == "data" || words[0] == "dataroot" || words[0] == "datadir";
  return std::any_of(words.begin(), words.end(),
                     [](const std::string& w) { return w.rfind("data", 0) == 0; }) &&
         has_word({words.back()}, {"dir", "root", "path", "folder"});
}

// A job.yaml input or output name: an identifier (docs/formats.md).
std::string identifier(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty()) return "data";
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "d" + name;
  return name;
}

// The option's name without its generic part: --save-dir → save, --train-file → train.
std::string folder_name(const std::vector<std::string>& words, const std::string& fallback) {
  std::string name;
  for (const auto& word : words) {
    if (has_word({word}, {"dir", "path", "folder", "file", "root"})) continue;
    name += (name.empty() ? "" : "_") + word;
  }
  static const std::set<std::string> generic = {"out", "outf", "output", "outputs", "outdir", "save"};
  return name.empty() || generic.count(name) ? fallback : identifier(name);
}

std::string unique_name(std::string name, const std::vector<DraftFolder>& taken) {
  auto used = [&](const std::string& candidate) {
    return std::any_of(taken.begin(), taken.end(), [&](const DraftFolder& folder) {
      return std::equal(candidate.begin(), candidate.end(), folder.name.begin(), folder.name.end(),
                        [](char a, char b) { return std::tolower(a) == std::tolower(b); });
    });
  };
  const std::string base = name;
  for (int n = 2; used(name); ++n) name = base + "_" + std::to_string(n);
  return name;
}

std::string flag_of(const check::ArgOption& option) {
  for (const auto& flag : option.flags)
    if (flag.rfind("--", 0) == 0) return flag;
  return option.flags.empty() ? "--" + option.dest : option.flags.front();
}

// A relative path in the repository, "./"-prefixed, when `text` names something there.
std::optional<std::string> repository_path(const fs::path& dir, const std::string& text) {
  const fs::path path = fs::path(text).lexically_normal();
  if (text.empty() || path.is_absolute() || text[0] == '~' || path.empty() || *path.begin() == ".." ||
      path == ".")
    return std::nullopt;
  std::error_code ec;
  if (!fs::exists(dir / path, ec)) return std::nullopt;
  std::string relative = path.generic_string();
  if (!relative.empty() && relative.back() == '/') relative.pop_back();
  return "./" + relative;
}

// A file name the output's default ends in (--save model.pt): kept under the output folder.
std::string output_file(const std::optional<std::string>& default_text) {
  if (!default_text) return {};
  const fs::path path(*default_text);
  const std::string name = path.filename().string();
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  return plain && path.has_extension() && name[0] != '.' ? "/" + name : std::string();
}

// Builds the command's arguments and the draft's inputs and outputs from the entry's parser.
class ArgumentDraft {
 public:
  ArgumentDraft(const fs::path& dir, const std::string& file, JobDraft& draft)
      : dir_(dir), file_(file), draft_(draft) {
    for (const char* folder : kDataFolders)
      if (auto path = repository_path(dir, folder); path && fs::is_directory(dir / folder))
        data_folders_.push_back(*path);
  }

  void positional(const check::ArgOption& option) {
    const bool required = option.nargs.empty() || option.nargs == "+";
    if (data_like(words_of(option.dest)) && !data_folders_.empty()) {
      args_.push_back(bind_data_folder(option, option.dest));
    } else if (required) {
      args_.push_back(kPlaceholder);
      note(option, option.dest);
    }
  }

  void option(const check::ArgOption& option, bool uses_cuda) {
    const auto words = words_of(option.dest);
    const std::string flag = flag_of(option);
    if (option.dest == "cuda" && option.action == "store_true" && uses_cuda) {
      args_.push_back(flag);
      return;
    }
    if (!takes_path(option) || !add_folder(option, words, flag)) {
      if (!option.required) return;
      const bool choice = option.choices && !option.choices->empty();
      args_.push_back(flag);
      args_.push_back(choice ? option.choices->front() : kPlaceholder);
      if (!choice) note(option, flag);
    }
  }

  std::vector<std::string> args() const { return args_; }

  // Data folders no option takes: uploaded with the code, worth a word.
  void note_unused_folders() {
    for (const auto& folder : data_folders_) {
      if (bound_.count(folder)) continue;
      draft_.notes.push_back(fmt::format(
          "{}/ is uploaded with the code; if the platform mounts it instead, declare it under inputs:",
          folder.substr(2)));
    }
  }

 private:
  bool add_folder(const check::ArgOption& option, const std::vector<std::string>& words,
                  const std::string& flag) {
    if (output_like(words)) {
      const std::string name = unique_name(folder_name(words, "output"), draft_.outputs);
      draft_.outputs.push_back({name, "", why(option, flag)});
      args_.push_back(flag);
      args_.push_back("${{outputs." + name + "}}" + output_file(option.default_text));
      return true;
    }
    if (auto path = repository_path(dir_, option.default_text.value_or(""))) {
      const std::string name =
          unique_name(folder_name(words, identifier(fs::path(*path).stem().string())), draft_.inputs);
      draft_.inputs.push_back({name, *path, why(option, flag)});
      bound_.insert(*path);
      args_.push_back(flag);
      args_.push_back("${{inputs." + name + "}}");
      return true;
    }
    if (data_like(words) && !data_folders_.empty()) {
      args_.push_back(flag);
      args_.push_back(bind_data_folder(option, flag));
      return true;
    }
    return false;
  }

  std::string bind_data_folder(const check::ArgOption& option, const std::string& shown) {
    const std::string& folder = data_folders_.front();
    auto same = std::find_if(draft_.inputs.begin(), draft_.inputs.end(),
                             [&](const DraftFolder& input) { return input.path == folder; });
    std::string name =
        same != draft_.inputs.end() ? same->name : unique_name(identifier(folder.substr(2)), draft_.inputs);
    if (same == draft_.inputs.end()) draft_.inputs.push_back({name, folder, why(option, shown)});
    bound_.insert(folder);
    return "${{inputs." + name + "}}";
  }

  std::string why(const check::ArgOption& option, const std::string& shown) const {
    return fmt::format("{} ({}:{})", shown, file_, option.line);
  }

  void note(const check::ArgOption& option, const std::string& shown) {
    draft_.notes.push_back(fmt::format("{} is required ({}:{}): replace {} with its value", shown, file_,
                                       option.line, kPlaceholder));
  }

  const fs::path& dir_;
  const std::string& file_;
  JobDraft& draft_;
  std::vector<std::string> data_folders_;
  std::set<std::string> bound_;
  std::vector<std::string> args_;
};

// A value written plainly when YAML reads it back as the same text, else double-quoted.
std::string yaml_text(const std::string& text) {
  const bool plain =
      !text.empty() && std::string_view("-?:,[]{}#&*!|>'\"%@` ").find(text[0]) == std::string_view::npos &&
      text.back() != ' ' && text.find(": ") == std::string::npos && text.find(" #") == std::string::npos &&
      std::none_of(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\t'; });
  if (plain) return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' || c == '\\' ? std::string("\\") + c : c == '\n' ? "\\n" : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::optional<EntryScript> choose_entry(const check::CodeScan& scan) {
  auto depth = [](const std::string& path) { return std::count(path.begin(), path.end(), '/'); };
  std::vector<const check::ScannedFile*> files;
  for (const auto& file : scan.files) files.push_back(&file);
  std::stable_sort(files.begin(), files.end(),
                   [&](auto* a, auto* b) { return depth(a->path) < depth(b->path); });
  auto find = [&](auto&& wanted) -> const check::ScannedFile* {
    auto it = std::find_if(files.begin(), files.end(), [&](auto* file) { return wanted(*file); });
    return it == files.end() ? nullptr : *it;
  };
  auto script = [](const check::ScannedFile& file) { return EntryScript{file.path, ""}; };
  for (const char* name : {"train.py", "main.py", "run.py"})
    if (auto* file = find([&](const check::ScannedFile& f) { return f.path == name; })) return script(*file);
  if (auto* file = find([](const check::ScannedFile& f) { return f.main_guard && f.builds_parser; }))
    return script(*file);
  if (auto* file = find([&](const check::ScannedFile& f) {
        return fs::path(f.path).filename() == "__main__.py" && depth(f.path) > 0;
      })) {
    std::string module = fs::path(file->path).parent_path().generic_string();
    std::replace(module.begin(), module.end(), '/', '.');
    return EntryScript{file->path, module};
  }
  if (auto* file = find([](const check::ScannedFile& f) { return f.main_guard; })) return script(*file);
  return std::nullopt;
}

JobDraft draft_job(const fs::path& dir, const check::CodeScan& scan, const EntryScript& entry,
                   const DraftChoices& choices) {
  JobDraft draft;
  draft.name = fs::absolute(dir).lexically_normal().filename().string();
  if (draft.name.empty()) draft.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  draft.platform = choices.platform;
  draft.image = choices.image;

  for (const auto& file : scan.files)
    if (file.cuda_line > 0) {
      draft.gpus = 1;
      draft.gpus_why = fmt::format("the code uses CUDA ({}:{})", file.path, file.cuda_line);
      break;
    }

  std::error_code ec;
  if (fs::is_regular_file(dir / "requirements.txt", ec)) {
    draft.setup = "pip install --user -r requirements.txt";
    if (!choices.network)
      draft.notes.push_back(
          fmt::format("{} has no network: pip installs only what the image or the code folder holds "
                      "(pip install --user --no-index --find-links wheels/ -r requirements.txt)",
                      choices.platform));
  }

  std::vector<std::string> command = {"python"};
  if (entry.module.empty()) {
    command.push_back(entry.file);
  } else {
    command.insert(command.end(), {"-m", entry.module});
  }
  ArgumentDraft args(dir, entry.file, draft);
  if (scan.argparse) {
    for (const auto& positional : scan.argparse->positionals) args.positional(positional);
    for (const auto& option : scan.argparse->options) args.option(option, draft.gpus > 0);
  }
  args.note_unused_folders();
  for (const auto& word : args.args()) command.push_back(word);
  for (const auto& word : command)
    draft.command += (draft.command.empty() ? "" : " ") + quote_shell_word(word, "${}");
  return draft;
}

std::string job_yaml(const JobDraft& draft) {
  auto folders = [](const char* key, const std::vector<DraftFolder>& list) {
    if (list.empty()) return std::string();
    std::string text = std::string(key) + ":\n";
    for (const auto& folder : list)
      text += fmt::format("  {}: {}  # {}\n", folder.name,
                          folder.path.empty() ? "{}" : "{path: " + yaml_text(folder.path) + "}", folder.why);
    return text;
  };
  std::string text =
      "# Drafted by `preflight init` from the code: check it, then `preflight check` and\n"
      "# `preflight run` (docs/formats.md describes every key).\n";
  text += "name: " + yaml_text(draft.name) + "\n";
  text += "platform: " + yaml_text(draft.platform) + "\n";
  text += "image: " + yaml_text(draft.image) + "\n";
  for (const auto& note : draft.notes) text += "# " + note + "\n";
  if (draft.setup) text += "setup: " + yaml_text(*draft.setup) + "\n";
  text += "command: " + yaml_text(draft.command) + "\n";
  text += folders("inputs", draft.inputs);
  text += folders("outputs", draft.outputs);
  if (draft.gpus > 0) text += fmt::format("resources: {{gpus: {}}}  # {}\n", draft.gpus, draft.gpus_why);
  return text;
}

}  // namespace preflight::pipeline
