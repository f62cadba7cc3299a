// The `lockstep` command-line tool: each engine adds its subcommand group to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace lockstep::cli {

/// Exit status for a command that ran and failed on its input (bad option values, bad files).
inline constexpr int kExitBadInput = 2;
/// Exit status for a failure while running (a backend error, an I/O failure).
inline constexpr int kExitRunFailure = 1;

/// `lockstep qkan ...` (qkan_commands.cpp).
void add_qkan_commands(CLI::App& app);

}  // namespace lockstep::cli
