// Error types shared by the compat harness.
#pragma once

#include <stdexcept>
#include <string>

namespace compat {

// A failure of the harness or of the test set-up (not of the system under test).
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Thrown from polling loops once SIGINT/SIGTERM has been received.
class Interrupted : public Error {
  public:
    Interrupted() : Error("interrupted by signal") {}
};

// Something the scenario needs is missing on this machine (e.g. loop
// devices): the scenario is skipped, not failed.
class Unavailable : public Error {
  public:
    using Error::Error;
};

// Builds an Error for a failed system call: "<what>: <strerror(errno)>".
Error sys_error(const std::string& what);

} // namespace compat
