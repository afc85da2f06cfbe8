#include "cli/command.hpp"

int main(int argc, char** argv) { return preflight::cli::main_with_args(argc, argv); }
