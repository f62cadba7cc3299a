// The `lockstep` command-line tool: each engine adds its subcommand group to the app.
#pragma once

#include <CLI/CLI.hpp>
#include <exception>

namespace lockstep::cli {

/// Exit status for a command that ran and failed on its input (bad option values, bad files).
inline constexpr int kExitBadInput = 2;
/// Exit status for a failure while running (a backend error, an I/O failure).
inline constexpr int kExitRunFailure = 1;

/// Exit status for a run stopped by SIGINT / SIGTERM after saving its state (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

/// `lockstep qkan ...` (qkan_commands.cpp).
void add_qkan_commands(CLI::App& app);

#if LOCKSTEP_WITH_PROP
/// `lockstep prop ...` (prop_commands.cpp).
void add_prop_commands(CLI::App& app);
/// `lockstep prop mode`, the guide calculator (prop_mode.cpp), under the `prop` subcommand.
void add_mode_command(CLI::App& prop);
/// Whether `e` is a propagation run stopped by SIGINT / SIGTERM (its state saved).
bool is_interruption(const std::exception& e);
#endif

}  // namespace lockstep::cli
