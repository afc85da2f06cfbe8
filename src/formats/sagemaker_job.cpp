// A SageMaker framework estimator as job.yaml: its arguments (entry_point, source_dir,
// hyperparameters, instance_type, instance_count, image_uri or framework_version,
// environment) and the channels given to fit(), read from a JSON or YAML file of them, or
// found in the Python that builds the estimator (sagemaker.pytorch.PyTorch(...) with literal
// arguments, then estimator.fit(...)). Only literals are read, never run; any other value is a
// note. docs/formats.md "SageMaker estimator" has the table.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>

#include "formats/readers.hpp"
#include "spec/job_io.hpp"
#include "util/input_bounds.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::formats {

namespace {

namespace fs = std::filesystem;

// An argument's value as written: a string, an unquoted number or boolean, a dict, a list, or
// anything else (a variable, a call), kept as its text.
struct Value {
  enum class Kind { String, Typed, Dict, List, Other } kind = Kind::Other;
  std::string text;
  std::vector<Value> items;  // a dict's entries, in order, each with its key
  std::string key;           // an entry's key in its dict
  std::vector<Value> list;
  SourceLocation at;
};

struct Argument {
  std::string name;
  Value value;
  SourceLocation at;  // of the name
};

Value value_of(const spec::YamlDoc& doc, const YAML::Node& node) {
  Value value;
  value.at = doc.at(node);
  if (node.IsScalar()) {
    value.kind = spec::is_literal(node) ? Value::Kind::Typed : Value::Kind::String;
    value.text = node.Scalar();
  } else if (node.IsMap()) {
    value.kind = Value::Kind::Dict;
    for (const auto& entry : node)
      if (entry.first.IsScalar()) {
        value.items.push_back(value_of(doc, entry.second));
        value.items.back().key = entry.first.Scalar();
      }
  } else if (node.IsSequence()) {
    value.kind = Value::Kind::List;
    for (const auto& item : node) value.list.push_back(value_of(doc, item));
  }
  return value;
}

// Python source read as far as literals go: the arguments of one call, each a literal or the
// text of what it is instead.
class PythonCall {
 public:
  PythonCall(const std::string& text, const fs::path& file) : text_(text), file_(file) {
    // Where each line starts, so that a position's line is a binary search, not a recount
    // from the file's start for every value (which made a file of 90,000 literals take 89 s).
    line_starts_.push_back(0);
    for (std::size_t at = text_.find('\n'); at != std::string::npos; at = text_.find('\n', at + 1))
      line_starts_.push_back(at + 1);
  }

  // Where the first list or dict nested deeper than kMaxNesting starts, if one did: its
  // value is read as an expression, and the reader refuses the file.
  std::optional<std::size_t> too_deep() const { return too_deep_; }

  // The offset just past "NAME(" of the first call of one of `names` (a dotted prefix such as
  // sagemaker.pytorch. is allowed), or npos.
  std::size_t find_call(const std::vector<std::string_view>& names, std::size_t from = 0) const {
    for (std::size_t at = from; at < text_.size(); ++at) {
      if (text_[at] == '#') {
        at = text_.find('\n', at);
        if (at == std::string::npos) break;
        continue;
      }
      if (text_[at] == '"' || text_[at] == '\'') {
        at = skip_string(at) - 1;
        continue;
      }
      for (std::string_view name : names) {
        if (text_.compare(at, name.size(), name) != 0) continue;
        const bool starts_word =
            at == 0 || !(std::isalnum(static_cast<unsigned char>(text_[at - 1])) || text_[at - 1] == '_');
        std::size_t after = at + name.size();
        while (after < text_.size() && (text_[after] == ' ' || text_[after] == '\t')) ++after;
        if ((starts_word || name[0] == '.') && after < text_.size() && text_[after] == '(') return after + 1;
      }
    }
    return std::string::npos;
  }

  // The call's arguments from just past its "(": positional ones have an empty name.
  std::vector<Argument> arguments(std::size_t at) {
    std::vector<Argument> out;
    pos_ = at;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] == ')') break;
      Argument argument;
      const std::size_t start = pos_;
      std::size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
      std::size_t eq = end;
      while (eq < text_.size() && (text_[eq] == ' ' || text_[eq] == '\t')) ++eq;
      if (end > start && eq < text_.size() && text_[eq] == '=' && text_.compare(eq, 2, "==") != 0) {
        argument.name = text_.substr(start, end - start);
        argument.at = location(start);
        pos_ = eq + 1;
        skip_space();
      } else {
        argument.at = location(start);
      }
      argument.value = value();
      out.push_back(std::move(argument));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',')
        ++pos_;
      else
        break;
    }
    return out;
  }

  SourceLocation location(std::size_t offset) const {
    const auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<int>(next - line_starts_.begin());
    return SourceLocation{file_, line, static_cast<int>(offset - *(next - 1)) + 1};
  }

 private:
  void skip_space() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '\\') {
        ++pos_;
      } else if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  // Past the string literal that starts at `at` (its quote), triple-quoted or not.
  std::size_t skip_string(std::size_t at) const {
    const char quote = text_[at];
    const bool triple = text_.compare(at, 3, std::string(3, quote)) == 0;
    std::size_t i = at + (triple ? 3 : 1);
    while (i < text_.size()) {
      if (text_[i] == '\\') {
        i += 2;
        continue;
      }
      if (triple ? text_.compare(i, 3, std::string(3, quote)) == 0 : text_[i] == quote)
        return i + (triple ? 3 : 1);
      if (!triple && text_[i] == '\n') return i;
      ++i;
    }
    return text_.size();
  }

  // A plain or raw string literal's value (adjacent literals joined), or nullopt when what
  // starts here is not one (an f-string, bytes).
  std::optional<std::string> string_literal() {
    std::string joined;
    bool any = false;
    for (;;) {
      std::size_t at = pos_;
      bool raw = false;
      if (at < text_.size() && (text_[at] == 'r' || text_[at] == 'R')) raw = true, ++at;
      if (at >= text_.size() || (text_[at] != '"' && text_[at] != '\'')) break;
      const char quote = text_[at];
      const bool triple = text_.compare(at, 3, std::string(3, quote)) == 0;
      const std::size_t end = skip_string(at);
      const std::size_t body = at + (triple ? 3 : 1);
      const std::size_t body_end = std::max(body, end - (triple ? 3 : 1));
      for (std::size_t i = body; i < body_end; ++i) {
        if (!raw && text_[i] == '\\' && i + 1 < body_end) {
          const char c = text_[++i];
          joined += c == 'n' ? '\n' : c == 't' ? '\t' : c;
        } else {
          joined += text_[i];
        }
      }
      any = true;
      pos_ = end;
      const std::size_t saved = pos_;
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'' && text_[pos_] != 'r')) {
        pos_ = saved;
        break;
      }
    }
    if (!any) return std::nullopt;
    return joined;
  }

  Value value() {
    skip_space();
    Value out;
    out.at = location(pos_);
    const std::size_t start = pos_;
    if (auto text = string_literal()) {
      out.kind = Value::Kind::String;
      out.text = *text;
    } else if (pos_ < text_.size() && (text_[pos_] == '{' || text_[pos_] == '[')) {
      // value() recurses once per level: a file of 1,000,000 brackets overflowed the stack.
      if (depth_ == kMaxNesting) {
        too_deep_ = too_deep_.value_or(pos_);
        return other(start);
      }
      ++depth_;
      const bool literal = collection(out);
      --depth_;
      if (!literal) return other(start);
    } else {
      std::size_t end = pos_;
      if (end < text_.size() && (text_[end] == '-' || text_[end] == '+')) ++end;
      // A number's exponent has its sign: 1e-3.
      while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) ||
                                    text_[end] == '.' || text_[end] == '_' ||
                                    ((text_[end] == '-' || text_[end] == '+') && end > pos_ &&
                                     (text_[end - 1] == 'e' || text_[end - 1] == 'E') &&
                                     std::isdigit(static_cast<unsigned char>(text_[pos_])))))
        ++end;
      const std::string word = text_.substr(pos_, end - pos_);
      std::size_t after = end;
      while (after < text_.size() && (text_[after] == ' ' || text_[after] == '\t')) ++after;
      const bool ends =
          after >= text_.size() || std::string_view(",)}]:\n#").find(text_[after]) != std::string_view::npos;
      double number = 0;
      const bool numeric = !word.empty() && std::sscanf(word.c_str(), "%lf", &number) == 1 &&
                           word.find_first_not_of("+-0123456789.eE_") == std::string::npos;
      if (ends && (word == "True" || word == "False")) {
        out.kind = Value::Kind::Typed, out.text = word == "True" ? "true" : "false", pos_ = end;
      } else if (ends && numeric) {
        out.kind = Value::Kind::Typed, out.text = word, pos_ = end;
      } else {
        return other(start);
      }
    }
    // A literal followed by an operator (a + b) is an expression after all.
    const std::size_t saved = pos_;
    skip_space();
    const bool ends =
        pos_ >= text_.size() || std::string_view(",)}]:").find(text_[pos_]) != std::string_view::npos;
    pos_ = saved;
    return ends ? out : other(start);
  }

  // Reads the list or dict literal that starts at pos_ (its bracket) into `out`; false when
  // what starts there is not one.
  bool collection(Value& out) {
    const char close = text_[pos_] == '{' ? '}' : ']';
    const bool dict = close == '}';
    out.kind = dict ? Value::Kind::Dict : Value::Kind::List;
    ++pos_;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] == close) break;
      Value item = value();
      if (dict) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != ':' || item.kind != Value::Kind::String) return false;
        ++pos_;
        Value entry = value();
        entry.key = item.text;
        out.items.push_back(std::move(entry));
      } else {
        out.list.push_back(std::move(item));
      }
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',')
        ++pos_;
      else
        break;
    }
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != close) return false;
    ++pos_;
    return true;
  }

  // What starts at `start` and is not a literal: its text, to the end of the argument.
  Value other(std::size_t start) {
    int depth = 0;
    pos_ = start;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"' || c == '\'') {
        pos_ = skip_string(pos_);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      }
      if (depth == 0 && (c == ',' || c == ':')) break;
      ++pos_;
    }
    Value out;
    out.kind = Value::Kind::Other;
    out.text = trim(text_.substr(start, pos_ - start));
    out.at = location(start);
    return out;
  }

  const std::string& text_;
  fs::path file_;
  std::vector<std::size_t> line_starts_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::optional<std::size_t> too_deep_;
};

// The GPUs of SageMaker's training instance types (aws.amazon.com/sagemaker/pricing): ml.<family>.<size>.
int instance_gpus(const std::string& type) {
  static const std::array<std::pair<std::string_view, int>, 24> kGpus = {{
      {"ml.p3.2xlarge", 1},    {"ml.p3.8xlarge", 4},    {"ml.p3.16xlarge", 8},  {"ml.p3dn.24xlarge", 8},
      {"ml.p4d.24xlarge", 8},  {"ml.p4de.24xlarge", 8}, {"ml.p5.48xlarge", 8},  {"ml.g4dn.xlarge", 1},
      {"ml.g4dn.2xlarge", 1},  {"ml.g4dn.4xlarge", 1},  {"ml.g4dn.8xlarge", 1}, {"ml.g4dn.12xlarge", 4},
      {"ml.g4dn.16xlarge", 1}, {"ml.g5.xlarge", 1},     {"ml.g5.2xlarge", 1},   {"ml.g5.4xlarge", 1},
      {"ml.g5.8xlarge", 1},    {"ml.g5.16xlarge", 1},   {"ml.g5.12xlarge", 4},  {"ml.g5.24xlarge", 4},
      {"ml.g5.48xlarge", 8},   {"ml.g6.xlarge", 1},     {"ml.g6.12xlarge", 4},  {"ml.g6.48xlarge", 8},
  }};
  for (const auto& [name, gpus] : kGpus)
    if (name == type) return gpus;
  // The CPU families: ml.m5.large, ml.c6i.xlarge, ml.r5.2xlarge, ml.t3.medium.
  const bool cpu = type.size() > 4 && type.rfind("ml.", 0) == 0 &&
                   std::string_view("mcrt").find(type[3]) != std::string_view::npos &&
                   std::isdigit(static_cast<unsigned char>(type[4]));
  return cpu ? 0 : -1;
}

const std::vector<std::string_view> kEstimators = {"PyTorch", "HuggingFace", "TensorFlow", "Estimator",
                                                   "SKLearn", "XGBoost",     "MXNet"};

class SageMakerReader {
 public:
  SageMakerReader(const fs::path& file, const ReadOptions& options)
      : file_(file), options_(options), out_(file) {}

  Result<Translation> from_yaml(const spec::YamlDoc& doc) {
    auto fields = doc.fields(doc.root(), "", {});
    if (!fields) return std::move(fields).error();
    std::vector<Argument> arguments;
    std::optional<Value> fit;
    for (const auto& field : *fields) {
      Value value = value_of(doc, field.value);
      if (field.key == "inputs")
        fit = std::move(value);
      else
        arguments.push_back(Argument{field.key, std::move(value), doc.at(field.key_node)});
    }
    return map(arguments, fit, doc.at(doc.root()), "");
  }

  Result<Translation> from_python(const std::string& text) {
    PythonCall python(text, file_);
    const std::size_t call = python.find_call(kEstimators);
    if (call == std::string::npos)
      return Error::bad_input(
          "no SageMaker estimator call (PyTorch(...), HuggingFace(...), Estimator(...)) in this Python file",
          SourceLocation{file_, 1, 1});
    const SourceLocation call_at = python.location(call - 1);
    auto arguments = python.arguments(call);
    std::optional<Value> fit;
    if (const std::size_t fit_call = python.find_call({".fit"}, call); fit_call != std::string::npos) {
      for (auto& argument : python.arguments(fit_call))
        if (argument.name.empty() || argument.name == "inputs") {
          fit = std::move(argument.value);
          break;
        }
    }
    if (const auto deep = python.too_deep())
      return Error::bad_input(
          fmt::format("lists and dicts nested more than {} deep; an estimator's arguments "
                      "need a few levels at most",
                      kMaxNesting),
          python.location(*deep));
    return map(arguments, fit, call_at, "the estimator's ");
  }

 private:
  Result<Translation> map(const std::vector<Argument>& arguments, const std::optional<Value>& fit,
                          const SourceLocation& start, const std::string& whose) {
    std::optional<Argument> entry_point, source_dir, image, instance_type, instance_count, name,
        hyperparameters, environment, max_run;
    for (const Argument& argument : arguments) {
      if (argument.name.empty()) {
        out_.unmapped(argument.at, "a positional argument", "the estimator's arguments are read by name");
        continue;
      }
      const bool other = argument.value.kind == Value::Kind::Other;
      const auto set = [&](std::optional<Argument>& slot) {
        if (other)
          out_.unmapped(argument.at, argument.name + "=" + argument.value.text,
                        "not a literal value; Preflight reads the file, it does not run it");
        else
          slot = argument;
      };
      if (argument.name == "entry_point")
        set(entry_point);
      else if (argument.name == "source_dir")
        set(source_dir);
      else if (argument.name == "image_uri")
        set(image);
      else if (argument.name == "instance_type")
        set(instance_type);
      else if (argument.name == "instance_count")
        set(instance_count);
      else if (argument.name == "base_job_name")
        set(name);
      else if (argument.name == "hyperparameters")
        set(hyperparameters);
      else if (argument.name == "environment")
        set(environment);
      else if (argument.name == "max_run" && whole_seconds(argument.value))
        max_run = argument;
      else
        out_.unmapped(argument.at, whose + argument.name, why_not(argument.name));
    }
    if (!entry_point || entry_point->value.kind != Value::Kind::String || entry_point->value.text.empty())
      return Error::bad_input(
          whose +
              "entry_point: a SageMaker estimator needs entry_point, the script it runs, as a "
              "string",
          entry_point ? entry_point->at : start);

    out_.comment(
        fmt::format("The job.yaml that stands for {} (a SageMaker estimator), written by preflight convert.",
                    file_.filename().string()));
    out_.comment("Each field names where it came from; what could not be mapped is listed at the end.");
    if (name && name->value.kind == Value::Kind::String)
      out_.field(0, "name", {job_name_of(name->value.text)}, name->value.at, whose + "base_job_name");
    out_.field(0, "platform", {"sagemaker"}, entry_point->at, "a SageMaker estimator");
    if (image) {
      out_.field(0, "image", {image->value.text}, image->value.at, whose + "image_uri");
    }
    write_entry_point(*entry_point, source_dir, whose);
    write_inputs(fit);
    write_paths(out_, options_);
    if (environment) {
      std::vector<Found> variables;
      for (const Value& value : environment->value.items)
        variables.push_back(Found{value.text, value.at, value.key});
      write_environment(out_, variables, whose + "environment");
    }
    if (hyperparameters) write_hyperparameters(*hyperparameters, whose);
    write_resources(instance_type, instance_count, whose, start);
    if (max_run)
      out_.field(0, "time_limit", {duration_text(std::chrono::seconds(*whole_seconds(max_run->value)))},
                 max_run->value.at, whose + "max_run, in seconds");
    else if (std::none_of(arguments.begin(), arguments.end(),
                          [](const Argument& a) { return a.name == "max_run"; }))
      out_.field(0, "time_limit", {"1d"}, start, "SageMaker's default max_run, 86400 seconds");
    return std::move(out_);
  }

  // max_run's seconds: a whole number, or a product of them as scripts write it (5 * 24 * 60 * 60).
  static std::optional<long long> whole_seconds(const Value& value) {
    if (value.kind != Value::Kind::Typed && value.kind != Value::Kind::Other) return std::nullopt;
    long long product = 1;
    for (std::size_t start = 0; start <= value.text.size();) {
      const auto end = std::min(value.text.find('*', start), value.text.size());
      const std::string factor = trim(value.text.substr(start, end - start));
      if (factor.empty() || factor.size() > 9 || factor.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
      product *= std::stoll(factor);
      if (product <= 0 || product > 365LL * 86400) return std::nullopt;
      start = end + 1;
    }
    return product;
  }

  static std::string why_not(const std::string& key) {
    if (key == "framework_version" || key == "py_version" || key == "pytorch_version" ||
        key == "transformers_version")
      return "the framework's container: the image (image_uri, --image, or the sagemaker profile's default) "
             "stands in for it";
    if (key == "role" || key == "sagemaker_session" || key == "output_path" || key == "code_location")
      return "the AWS account's; the dry run has no AWS access";
    if (key == "max_run") return "not a whole number of seconds";
    if (key == "max_wait" || key == "use_spot_instances" || key == "keep_alive_period_in_seconds")
      return "spot and warm-pool settings on SageMaker; the dry run runs once, here";
    if (key == "checkpoint_s3_uri" || key == "checkpoint_local_path")
      return "checkpoints sync from /opt/ml/checkpoints, which the sagemaker profile keeps";
    if (key == "volume_size")
      return "the platform profile's disk applies (policies/platforms/sagemaker.yaml limits.disk)";
    if (key == "distribution") return "the dry run is one instance of one process";
    if (key == "dependencies") return "only source_dir is the code here; put the dependencies in it";
    return "not used by the dry run";
  }

  // The code folder: source_dir (a local folder, relative to this file), else the entry
  // point's folder; the command runs the entry point in it, as SageMaker's toolkit does.
  void write_entry_point(const Argument& entry_point, const std::optional<Argument>& source_dir,
                         const std::string& whose) {
    const fs::path base = fs::absolute(file_).lexically_normal().parent_path();
    fs::path entry = entry_point.value.text;
    std::string said = whose + "source_dir";
    fs::path code;
    SourceLocation from;
    if (!options_.code_dir.empty()) {
      code = code_folder(options_), said = "--code";
    } else if (source_dir && source_dir->value.kind == Value::Kind::String &&
               !spec::is_cloud_path(source_dir->value.text)) {
      code = (base / source_dir->value.text).lexically_normal(), from = source_dir->value.at;
    } else {
      if (source_dir)
        out_.unmapped(source_dir->at, whose + "source_dir",
                      "not a local folder; the code is --code, by default the current folder");
      code = source_dir ? code_folder(options_) : (base / entry).parent_path().lexically_normal();
      entry = source_dir ? entry : entry.filename();
      said = source_dir ? "the current folder (--code DIR names another)" : whose + "entry_point's folder";
      from = source_dir ? SourceLocation{} : entry_point.value.at;
    }
    out_.field(0, "code", {relative_to_source(out_, code)}, from, said);
    const std::string script = entry.string();
    const std::string program = script.ends_with(".py")   ? "python "
                                : script.ends_with(".sh") ? "/bin/sh "
                                                          : "";
    out_.field(0, "command", {program + quote_shell_word(script)}, entry_point.value.at,
               whose + "entry_point, run in the code folder by SageMaker's training toolkit");
  }

  // fit()'s channels: one S3 URI (the "training" channel), or {channel: URI or TrainingInput}.
  void write_inputs(const std::optional<Value>& fit) {
    if (!fit) return;
    std::vector<Value> channels;
    if (fit->kind == Value::Kind::String) {
      channels.push_back(*fit);
      channels.back().key = "training";
    } else if (fit->kind == Value::Kind::Dict) {
      channels = fit->items;
    } else {
      out_.unmapped(fit->at, "fit(" + fit->text + ")", "not a literal value; give the channels as strings");
    }
    bool opened = false;
    for (const Value& value : channels) {
      const std::string& channel = value.key;
      std::string uri = value.kind == Value::Kind::String ? value.text : "";
      // TrainingInput(s3_data=...) as a dict of its arguments (the YAML form).
      if (value.kind == Value::Kind::Dict)
        for (const Value& item : value.items)
          if (item.key == "s3_data" && item.kind == Value::Kind::String) uri = item.text;
      if (uri.empty()) {
        out_.unmapped(value.at, "fit channel " + channel, "not a literal S3 URI");
        continue;
      }
      if (uri.rfind("file://", 0) == 0) uri = uri.substr(7);  // local mode's file:// channels
      if (!opened) out_.open(0, "inputs", fit->at, "fit()'s channels"), opened = true;
      out_.field(1, input_name(channel), {uri}, value.at,
                 "channel " + channel + " (--map gives an S3 URI its local copy)");
    }
  }

  void write_hyperparameters(const Argument& hyperparameters, const std::string& whose) {
    if (hyperparameters.value.items.empty()) return;
    out_.open(0, "hyperparameters", hyperparameters.at, whose + "hyperparameters");
    for (const Value& value : hyperparameters.value.items) {
      const std::string& key = value.key;
      if (value.kind == Value::Kind::String || value.kind == Value::Kind::Typed)
        out_.field(1, key, {value.text, value.kind == Value::Kind::Typed}, value.at, key);
      else
        out_.unmapped(value.at, "hyperparameter " + key, "not a literal string, number or boolean");
    }
  }

  void write_resources(const std::optional<Argument>& type, const std::optional<Argument>& count,
                       const std::string& whose, const SourceLocation& start) {
    out_.open(0, "resources", type ? type->at : start);
    if (type) {
      const int gpus = instance_gpus(type->value.text);
      if (gpus >= 0)
        out_.field(1, "gpus", {std::to_string(gpus), true}, type->value.at,
                   whose + "instance_type " + type->value.text + "'s GPUs");
      out_.unmapped(type->at, whose + "instance_type",
                    gpus < 0
                        ? "an instance type Preflight does not know; the sagemaker profile's machine applies"
                        : "its memory and CPUs: the sagemaker profile's machine applies (a profile of your "
                          "own can match it)");
    }
    if (count)
      out_.field(1, "instance_count", {count->value.text, true}, count->value.at, whose + "instance_count");
  }

  fs::path file_;
  const ReadOptions& options_;
  Translation out_;
};

}  // namespace

Result<Translation> translate_sagemaker(const spec::YamlDoc& doc, const ReadOptions& options) {
  return SageMakerReader(doc.file(), options).from_yaml(doc);
}

Result<Translation> translate_sagemaker_python(const fs::path& file, const std::string& text,
                                               const ReadOptions& options) {
  return SageMakerReader(file, options).from_python(text);
}

}  // namespace preflight::formats
