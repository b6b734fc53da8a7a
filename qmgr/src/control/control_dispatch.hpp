// Answers one request line of the control socket: parses it (the only
// check a request gets), answers a query from ControlQueries, hands a
// command to ControlCommands, and turns every outcome (a parse error, an
// exception) into one reply line.
#pragma once

#include "control_commands.hpp"
#include "control_queries.hpp"

#include <array>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace cqmgr::qmgr {

class ControlDispatch {
  public:
    ControlDispatch(const ControlQueries& queries, ControlCommands& commands)
        : queries_(queries), commands_(commands) {}

    // The reply line (with its newline) to the request `line` (without
    // its newline) from user `uid`.
    std::string answer(std::string_view line, uid_t uid) const;

  private:
    const ControlQueries& queries_;
    ControlCommands& commands_;
    // The size of the last reply to each query, by verb.
    mutable std::array<std::size_t, 16> size_hints_{};
};

} // namespace cqmgr::qmgr
