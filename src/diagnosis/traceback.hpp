// Reading a Python traceback from the text a job printed, for when the harness did not load
// (or did not see the exception): the last "Traceback (most recent call last):" block.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/events.hpp"

namespace preflight::diagnosis {

// The exception of the last traceback in `lines` (also "Original Traceback", as DataLoader
// workers' exceptions are re-raised): frames outermost first, the type and message from the
// final "Type: message" line (indented lines after it continue the message), the errno and
// filename of an OSError message. Frames under `code_dir` are marked as the user's.
std::optional<harness::ExceptionEvent> parse_traceback(const std::vector<std::string>& lines,
                                                       const std::string& code_dir);

// "[Errno 13] Permission denied: '/x'" → 13 and "/x".
std::optional<int> errno_in(const std::string& message);
std::string oserror_filename(const std::string& message);

}  // namespace preflight::diagnosis
