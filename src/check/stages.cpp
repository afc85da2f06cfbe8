#include "check/stages.hpp"

#include <re2/re2.h>

namespace preflight::check {

std::string path_stage(const std::string& name, const std::string& use, const std::string& value) {
  static const re2::RE2 saves(R"((?i)(save|output|out_?dir|^-*out$|ckpt|checkpoint|export|model_?dir))");
  static const re2::RE2 weights(R"((?i)(pretrain|weights|resume|restore|init_?model|load_?model))");
  static const re2::RE2 weight_file(R"((?i)\.(pt|pth|ckpt|safetensors|h5|hdf5|pb|onnx)$)");
  if (use == "write" || re2::RE2::PartialMatch(name, saves)) return "checkpoint";
  if (use == "model" || re2::RE2::PartialMatch(name, weights) || re2::RE2::PartialMatch(value, weight_file))
    return "model";
  return "data";
}

}  // namespace preflight::check
