// Suggestions for misspelt names (keys, platforms, inputs, template variables): the closest
// candidate by edit distance, when it is close enough to be what the user meant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight {

// Edit distance: insertions, deletions, substitutions and swaps of two neighbouring
// characters each cost 1 (Levenshtein with transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` (ignoring case), if it is within about a third of the
// word's length; ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// `; did you mean "gpus"?` or "" — ready to append to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace preflight
