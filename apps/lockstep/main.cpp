// `lockstep`: the command-line tool. Subcommand groups live in their own files and register
// here; every error reaches the user as one clear line and a non-zero exit status.
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "commands.hpp"
#include "lockstep/core/backend.hpp"

int main(int argc, char** argv) {
  CLI::App app{"lockstep: many small independent systems advanced together through one schedule"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(lockstep::version()));

  auto* info = app.add_subcommand("info", "Print the version and what this build has (CUDA, SIMD targets)");
  info->callback([] { std::cout << lockstep::build_summary() << "\n"; });
  lockstep::cli::add_qkan_commands(app);
#if LOCKSTEP_WITH_PROP
  lockstep::cli::add_prop_commands(app);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);                         // prints the help, the version or the reason
    return code == 0 ? 0 : lockstep::cli::kExitBadInput;  // --help / --version: 0; bad options: 2
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
    return lockstep::cli::kExitBadInput;
  } catch (const std::exception& e) {
#if LOCKSTEP_WITH_PROP
    if (lockstep::cli::is_interruption(e)) {
      std::fprintf(stderr, "lockstep: %s\n", e.what());
      return lockstep::cli::kExitInterrupted;
    }
#endif
    std::fprintf(stderr, "lockstep: failed: %s\n", e.what());
    return lockstep::cli::kExitRunFailure;
  }
  return 0;
}
