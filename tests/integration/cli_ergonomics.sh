#!/usr/bin/env bash
# The command line's own helpers: --version, explain, and the completion scripts. The bash
# script is sourced and asked for completions as bash would; zsh's and fish's are parsed by
# those shells when installed (a stated skip otherwise), fish's also asked to complete.
# Usage: cli_ergonomics.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(sed -n 's/^project(preflight VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
check_equal "--version" "preflight $version" "$("$preflight" --version)"

"$preflight" explain path-not-found >"$work/out" 2>&1
check_equal "explain: exit status" 0 "$?"
check_contains "explain: the category and its dimension" "Path Not Found (Execution Environment)" "$(cat "$work/out")"
check_contains "explain: the usual fix" "Usual fix: " "$(cat "$work/out")"
check_contains "explain: the rule of the same id" "Rule path-not-found (dynamic): Path Not Found" "$(cat "$work/out")"
check_contains "explain by name: the category" "$("$preflight" explain "Path Not Found")" "$(cat "$work/out")"
check_contains "explain a static rule" "Rule path-not-on-platform (static): Path Not Found (Execution Environment)" \
  "$("$preflight" explain path-not-on-platform)"
"$preflight" explain --list >"$work/list"
check_equal "explain --list: the 20 categories and more" 1 "$(($(grep -c $'\tcategory\t' "$work/list") >= 20))"
check_equal "explain --list: static rules" 1 "$(($(grep -c $'\tstatic$' "$work/list") >= 10))"
check_equal "explain --list: dynamic rules" 1 "$(($(grep -c $'\tdynamic$' "$work/list") >= 20))"
check_contains "explain --list: a rule, its category and kind" $'path-not-on-platform\tPath Not Found\tstatic' \
  "$(cat "$work/list")"
"$preflight" explain "Path Not Fuond" >"$work/out" 2>"$work/err"
check_equal "explain unknown: exit status" 2 "$?"
check_contains "explain unknown: did you mean" 'unknown category or rule "Path Not Fuond"; did you mean "Path Not Found"?' "$(cat "$work/err")"

# bash: the script's function called as bash's completion calls it, on the words typed so far.
"$preflight" completion bash >"$work/preflight.bash"
check_equal "completion bash: exit status" 0 "$?"
complete_words() {
  bash -c 'PATH=$1:$PATH; source "$2"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _preflight
           printf "%s\n" "${COMPREPLY[@]}"' _ "$(dirname "$preflight")" "$work/preflight.bash" "$@"
}
check_equal "bash: a subcommand prefix" "check" "$(complete_words preflight ch)"
check_equal "bash: nested subcommands" "build" "$(complete_words preflight image b)"
check_equal "bash: an option prefix" "--platform" "$(complete_words preflight run --plat)"
check_equal "bash: a platform from the shipped profiles" "philly" "$(complete_words preflight run --platform ph)"
check_contains "bash: a category by name" 'Path\ Not\ Found' "$(complete_words preflight explain Path)"
check_equal "bash: every category and rule, once" "$("$preflight" explain --list | cut -f1,2 | tr '\t' '\n' | sort -u | wc -l)" \
  "$(complete_words preflight explain '' | wc -l)"
check_equal "bash: a rule id" "path-not-on-platform" "$(complete_words preflight explain path-not-o)"
mkdir -p "$work/jobs" && touch "$work/jobs/job.yaml" "$work/jobs/train.py"
check_equal "bash: a job file" "job.yaml" "$(cd "$work/jobs" && complete_words preflight check '')"
check_equal "bash: the shells" "zsh" "$(complete_words preflight completion z)"

"$preflight" completion zsh >"$work/_preflight"
if command -v zsh >/dev/null; then
  zsh -n "$work/_preflight" 2>"$work/err"
  check_equal "zsh: the script parses" "0 " "$? $(cat "$work/err")"
else
  echo "SKIP (zsh part): zsh is not installed (apt-get install zsh)" >&2
fi
"$preflight" completion fish >"$work/preflight.fish"
if command -v fish >/dev/null; then
  fish -n "$work/preflight.fish" 2>"$work/err"
  check_equal "fish: the script parses" "0 " "$? $(cat "$work/err")"
  check_equal "fish: a platform" "philly" \
    "$(PATH=$(dirname "$preflight"):$PATH fish -c "source $work/preflight.fish; complete -C 'preflight run --platform ph'")"
else
  echo "SKIP (fish part): fish is not installed (apt-get install fish)" >&2
fi
"$preflight" completion tcsh >/dev/null 2>&1
check_equal "an unknown shell: exit status" 2 "$?"
finish
