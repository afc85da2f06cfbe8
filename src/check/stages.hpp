// The stage of a static finding, inferred from what its line does where no run has shown it
// (docs/static-checks.md "Stages"): the operation that would fail, not where it is written.
#pragma once

#include <string>

namespace preflight::check {

// A path: "checkpoint" when the code writes it (or its option or key names a save, output or
// checkpoint folder), "model" when it loads weights (from_pretrained, load_state_dict, a
// .pt/.pth/.ckpt/.safetensors/.h5 file, an option naming pretrained weights or a resume),
// else "data". `name` is the argparse option, configuration key or command-line option
// that gives the path ("--save-dir", "data_root"); `use` is the code scan's ("write",
// "model", "read", "").
std::string path_stage(const std::string& name, const std::string& use, const std::string& value);

}  // namespace preflight::check
